import Foundation
import JSONText

/// Fields that depend on a choice in the same item: a question's format on its response type, a
/// schedule's fields on its frequency. The page shows the fields of the chosen case; choosing
/// another case shows its fields (a button without JavaScript, at once with it) and, when saved,
/// starts the part the cases share (`reset`: a question's `format`) afresh, so nothing of the old
/// case is left behind.
package struct FormVariant: Sendable {
    package struct Case: Sendable {
        package var value: String
        package var label: String
        package var elements: [FormElement]

        package init(_ value: String, _ label: String, _ elements: [FormElement] = []) {
            self.value = value
            self.label = label
            self.elements = elements
        }
    }

    /// The member that chooses the case (`/resultType`), from the item.
    package var discriminator: JSONPointer
    package var label: String
    package var help: String?
    package var cases: [Case]
    /// What is emptied when the case changes (`/format`), from the item; nil: nothing.
    package var reset: JSONPointer?
    /// What an emptied `reset` starts as.
    package var resetValue: JSONValue
    /// The fields of the cases not chosen are removed from the item: an anchor counted from a
    /// property keeps no activity of an earlier answer. (Off where the cases share members, as
    /// a schedule's cases share their dates.)
    package var clearsOtherCases: Bool

    package init(
        _ discriminator: String, _ label: String, help: String? = nil, reset: String? = nil, resetValue: JSONValue = .object([:]),
        clearsOtherCases: Bool = false, _ cases: [Case]
    ) {
        self.clearsOtherCases = clearsOtherCases
        self.discriminator = JSONPointer(discriminator)!
        self.label = label
        self.help = help
        self.cases = cases
        self.reset = reset.map { JSONPointer($0)! }
        self.resetValue = resetValue
    }

    /// The choice alone, without the cases' fields: what a list shows of each row (a step's
    /// response type on the activity's page) when the fields are on the row's own page. Changing
    /// the choice there still starts `reset` afresh.
    package var choiceOnly: FormVariant {
        var variant = self
        variant.cases = cases.map { Case($0.value, $0.label) }
        return variant
    }

    package func name(at prefix: JSONPointer) -> String { JSONPointer(tokens: prefix.tokens + discriminator.tokens).description }

    /// The case the form shows (by its marker: the case its fields were drawn for).
    package func drawnCase(in form: FormFields, at prefix: JSONPointer) -> Case? {
        let name = name(at: prefix)
        let value = form[name + "#variant"] ?? form[name] ?? ""
        return cases.first { $0.value == value }
    }

    package func values(in item: JSONValue, at prefix: JSONPointer) -> [(name: String, value: String)] {
        let name = name(at: prefix)
        let value = item[pointer: discriminator]?.text ?? ""
        var pairs: [(name: String, value: String)] = [(name, value), (name + "#variant", value)]
        if let chosen = cases.first(where: { $0.value == value }) {
            for element in chosen.elements { pairs += element.values(in: item, at: prefix) }
        }
        return pairs
    }

    package func apply(_ form: FormFields, at prefix: JSONPointer, to item: inout JSONValue) throws(JSONValue.PointerError) {
        let name = name(at: prefix)
        guard let chosen = form[name] else { return }  // not on the form: left as it is
        let drawn = form[name + "#variant"] ?? chosen
        if item[pointer: discriminator]?.text != chosen, let reset {
            try item.set(resetValue, at: reset)
        }
        try item.set(chosen.isEmpty ? nil : .string(chosen), at: discriminator)
        // (A value no case has, sent by a crafted form, clears nothing: the admin API names it.)
        if clearsOtherCases, let current = cases.first(where: { $0.value == chosen }) {
            let kept = Set(current.elements.compactMap(Self.fieldPointer))
            for other in cases where other.value != chosen {
                for pointer in other.elements.compactMap(Self.fieldPointer) where !kept.contains(pointer) {
                    try item.set(nil, at: pointer)
                }
            }
        }
        // Fields drawn for another case than the one chosen belong to that case: not applied.
        guard drawn == chosen, let current = cases.first(where: { $0.value == chosen }) else { return }
        for element in current.elements { try element.apply(form, at: prefix, to: &item) }
    }

    /// The member a case's field or optional object (an anchor) holds.
    private static func fieldPointer(_ element: FormElement) -> JSONPointer? {
        switch element {
        case .field(let field): field.pointer
        case .group(let group): group.pointer
        case .list, .variant: nil
        }
    }

    /// The form with the marker moved to the chosen case: the page then draws its fields.
    package static func refreshed(_ form: FormFields, variant name: String) -> FormFields {
        var form = form
        form.set(name + "#variant", form[name] ?? "")
        return form
    }
}
