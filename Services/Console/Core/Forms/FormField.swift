import Foundation
import JSONText
import StudyModels

/// One input of a console page, bound to a place in the study document by its JSON Pointer. The
/// pointer is also the input's name, so a problem the admin API locates finds its field.
package struct FormField: Sendable {
    package struct Option: Sendable, Equatable {
        package var value: String
        package var label: String

        package init(_ value: String, _ label: String) {
            self.value = value
            self.label = label
        }
    }

    package enum Kind: Sendable {
        /// One line of text; empty removes the member.
        case text
        /// Several lines of text (HTML where the apps show HTML).
        case longText
        /// A participant-facing text: English, and Spanish beside it when the study has Spanish.
        case localized(long: Bool)
        /// A number; text that is not one is sent as it was typed, so the admin API names it.
        case number
        /// true or false.
        case checkbox
        /// One of `options`.
        case choice([Option])
        /// Any of `options`, as an array of their values.
        case choices([Option])
    }

    package var pointer: JSONPointer
    package var label: String
    package var help: String?
    package var kind: Kind
    /// What the admin API takes when the member is left out (a study is enrolling unless it says
    /// otherwise), shown as the value so that saving an untouched page changes nothing.
    package var absent: JSONValue?

    package init(_ pointer: String, _ label: String, _ kind: Kind = .text, help: String? = nil, absent: JSONValue? = nil) {
        self.pointer = JSONPointer(pointer)!
        self.label = label
        self.kind = kind
        self.help = help
        self.absent = absent
    }

    /// The input's name (also its element id, made safe for CSS and fragment links).
    package var name: String { pointer.description }

    /// The same field for the element `index` of a list at `list` (a row of a repeated group).
    package func inRow(of list: JSONPointer, _ index: Int) -> FormField {
        var field = self
        field.pointer = JSONPointer(tokens: list.tokens + [String(index)] + pointer.tokens)
        return field
    }

    // MARK: Reading the document

    /// The form's values for this field, as the document holds them.
    package func values(in document: JSONValue) -> [(name: String, value: String)] {
        let current = document[pointer: pointer] ?? absent
        switch kind {
        case .text, .longText, .number, .choice:
            return [(name, current?.text ?? "")]
        case .localized:
            return [(name + "/en", Self.translation(current, "en")), (name + "/es", Self.translation(current, "es"))]
        case .checkbox:
            return current == .bool(true) ? [(name, "true")] : []
        case .choices:
            guard case .array(let items) = current else { return [] }
            return items.compactMap { $0.text.map { (name, $0) } }
        }
    }

    static func translation(_ value: JSONValue?, _ language: String) -> String {
        switch value {
        case .string(let text): language == "en" ? text : ""
        case .object(let translations): translations[language]?.text ?? ""
        default: ""
        }
    }

    // MARK: Writing the document

    /// Puts what the form says for this field into `document`.
    package func apply(_ form: FormFields, to document: inout JSONValue) throws(JSONValue.PointerError) {
        try document.set(value(from: form), at: pointer)
    }

    /// The JSON the form's inputs make, or nil when the member should be left out.
    package func value(from form: FormFields) -> JSONValue? {
        switch kind {
        case .text, .longText, .choice:
            let text = Self.trimmed(form[name])
            return text.isEmpty ? nil : .string(text)
        case .number:
            let text = Self.trimmed(form[name])
            if text.isEmpty { return nil }
            if let number = Double(text), number.isFinite { return .number(number) }
            return .string(text)
        case .localized:
            let english = Self.trimmed(form[name + "/en"])
            let spanish = Self.trimmed(form[name + "/es"])
            if spanish.isEmpty { return english.isEmpty ? nil : .string(english) }
            return .object(["en": .string(english), "es": .string(spanish)])
        case .checkbox:
            return .bool(form[name] == "true")
        case .choices(let options):
            let chosen = Set(form.all(name))
            return .array(options.filter { chosen.contains($0.value) }.map { .string($0.value) })
        }
    }

    /// Line breaks as `\n` (browsers send `\r\n`), and no stray spaces around a value.
    package static func trimmed(_ text: String?) -> String {
        (text ?? "").replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
