import Foundation
import JSONText
import StudyModels

/// What a page is made of: fields, and lists of items that each have fields (and lists) of their
/// own, such as the overview's pages or a consent's sections.
package indirect enum FormElement: Sendable {
    case field(FormField)
    case list(FormList)
    case group(FormGroup)
    case variant(FormVariant)

    /// The kinds of the study's uploaded files that the fields the form shows of it suggest
    /// (`FormField.suggests`): of a variant, only the case drawn in `form`.
    package func suggestedUploads(in form: FormFields, at prefix: JSONPointer) -> Set<FormField.Uploads> {
        switch self {
        case .field(let field): field.suggests.map { [$0] } ?? []
        case .list(let list): list.elements.reduce(into: []) { $0.formUnion($1.suggestedUploadsInAnyCase) }
        case .group(let group): group.elements.reduce(into: []) { $0.formUnion($1.suggestedUploads(in: form, at: prefix)) }
        case .variant(let variant):
            variant.drawnCase(in: form, at: prefix)?.elements.reduce(into: []) { $0.formUnion($1.suggestedUploads(in: form, at: prefix)) } ?? []
        }
    }

    /// The same, whichever case a variant's rows have (rows of a list are drawn by their own
    /// prefix, and a row may change its case on the page).
    private var suggestedUploadsInAnyCase: Set<FormField.Uploads> {
        switch self {
        case .field(let field): field.suggests.map { [$0] } ?? []
        case .list(let list): list.elements.reduce(into: []) { $0.formUnion($1.suggestedUploadsInAnyCase) }
        case .group(let group): group.elements.reduce(into: []) { $0.formUnion($1.suggestedUploadsInAnyCase) }
        case .variant(let variant):
            variant.cases.reduce(into: []) { kinds, item in
                for element in item.elements { kinds.formUnion(element.suggestedUploadsInAnyCase) }
            }
        }
    }

    /// What the element is called on the page (a table's column heading).
    package var label: String {
        switch self {
        case .field(let field): field.label
        case .list(let list): list.label
        case .group(let group): group.label
        case .variant(let variant): variant.label
        }
    }

    package func values(in item: JSONValue, at prefix: JSONPointer) -> [(name: String, value: String)] {
        switch self {
        case .field(let field): field.values(in: item, at: prefix)
        case .list(let list): list.values(in: item, at: prefix)
        case .group(let group): group.values(in: item, at: prefix)
        case .variant(let variant): variant.values(in: item, at: prefix)
        }
    }

    package func apply(_ form: FormFields, at prefix: JSONPointer, to item: inout JSONValue) throws(JSONValue.PointerError) {
        switch self {
        case .field(let field): try field.apply(form, at: prefix, to: &item)
        case .list(let list): try list.apply(form, at: prefix, to: &item)
        case .group(let group): try group.apply(form, at: prefix, to: &item)
        case .variant(let variant): try variant.apply(form, at: prefix, to: &item)
        }
    }

    /// The field whose member holds `pointer` (an absolute pointer), for a problem's link, with its
    /// input's name. Rows come from `form`, as the page shows them.
    package func field(holding pointer: JSONPointer, at prefix: JSONPointer, form: FormFields) -> (FormField, name: String)? {
        switch self {
        case .field(let field):
            let absolute = JSONPointer(tokens: prefix.tokens + field.pointer.tokens)
            return pointer.isWithin(absolute) ? (field, field.name(at: prefix)) : nil
        case .list(let list):
            let absolute = JSONPointer(tokens: prefix.tokens + list.pointer.tokens)
            // The list itself (it has no rows, too many): its fieldset.
            if pointer == absolute { return (FormField(list.pointer.description, list.label), absolute.description) }
            guard pointer.isWithin(absolute), pointer.tokens.count > absolute.tokens.count,
                let row = WholeNumber.parse(pointer.tokens[absolute.tokens.count], in: 0...FormList.maxRows)
            else { return nil }
            let rowPointer = absolute.appending(row)
            for element in list.elements {
                if let found = element.field(holding: pointer, at: rowPointer, form: form) { return found }
            }
            return nil
        case .group(let group):
            let absolute = JSONPointer(tokens: prefix.tokens + group.pointer.tokens)
            guard pointer.isWithin(absolute) else { return nil }
            for element in group.elements {
                if let found = element.field(holding: pointer, at: absolute, form: form) { return found }
            }
            return nil
        case .variant(let variant):
            let absolute = JSONPointer(tokens: prefix.tokens + variant.discriminator.tokens)
            if pointer.isWithin(absolute) {
                return (FormField(variant.discriminator.description, variant.label), absolute.description)
            }
            for element in variant.drawnCase(in: form, at: prefix)?.elements ?? [] {
                if let found = element.field(holding: pointer, at: prefix, form: form) { return found }
            }
            return nil
        }
    }
}

extension FormElement {
    /// The list whose input names start `name` (rows as `form` has them), for adding a row.
    package func list(named name: String, at prefix: JSONPointer, form: FormFields) -> FormList? {
        switch self {
        case .field:
            return nil
        case .list(let list):
            let absolute = list.name(at: prefix)
            if absolute == name { return list }
            guard name.hasPrefix(absolute + "/"), let row = FormEdit.row(of: name, in: absolute) else { return nil }
            let rowPointer = prefix.appending(list.pointer).appending(row)
            return list.elements.lazy.compactMap { $0.list(named: name, at: rowPointer, form: form) }.first
        case .group(let group):
            let absolute = group.name(at: prefix)
            guard name.hasPrefix(absolute + "/") else { return nil }
            return group.elements.lazy.compactMap { $0.list(named: name, at: prefix.appending(group.pointer), form: form) }.first
        case .variant(let variant):
            return (variant.drawnCase(in: form, at: prefix)?.elements ?? []).lazy
                .compactMap { $0.list(named: name, at: prefix, form: form) }.first
        }
    }
}

/// An object the document may leave out (a consent's sharing screen, a resource's period),
/// edited behind a checkbox: checked, the object is there with its fields; unchecked, it is left
/// out, whatever its fields say.
package struct FormGroup: Sendable {
    package var pointer: JSONPointer
    package var label: String
    /// The checkbox's label ("Ask whether data may be shared").
    package var toggle: String
    package var help: String?
    package var elements: [FormElement]

    package init(_ pointer: String, _ label: String, toggle: String, help: String? = nil, _ elements: [FormElement]) {
        self.pointer = JSONPointer(pointer)!
        self.label = label
        self.toggle = toggle
        self.help = help
        self.elements = elements
    }

    package func name(at prefix: JSONPointer) -> String { prefix.appending(pointer).description }

    package func values(in item: JSONValue, at prefix: JSONPointer) -> [(name: String, value: String)] {
        let name = name(at: prefix)
        let object = item[pointer: pointer]
        var pairs: [(name: String, value: String)] = [(name + "#group", "1")]
        if case .object = object { pairs.append((name + "#on", "true")) }
        let absolute = prefix.appending(pointer)
        for element in elements { pairs += element.values(in: object ?? .object([:]), at: absolute) }
        return pairs
    }

    /// A form without the group's marker (a crafted one) leaves the object as it is.
    package func apply(_ form: FormFields, at prefix: JSONPointer, to item: inout JSONValue) throws(JSONValue.PointerError) {
        let name = name(at: prefix)
        guard form[name + "#group"] != nil else { return }
        guard form[name + "#on"] == "true" else {
            try item.set(nil, at: pointer)
            return
        }
        var object = item[pointer: pointer] ?? .object([:])
        if case .object = object {} else { object = .object([:]) }
        for element in elements { try element.apply(form, at: prefix.appending(pointer), to: &object) }
        try item.set(object, at: pointer)
    }
}

/// A list in the document (`/overview`, `/consent/visualScreens`) edited as rows.
///
/// The form says how many rows there are (`<list>#count`) and, for each row, which item of the
/// document it was drawn from (`<list>/<row>#from`), so a row keeps the members the page does not
/// show, and rows can be added, removed and moved on the page before anything is saved.
package struct FormList: Sendable {
    package var pointer: JSONPointer
    package var label: String
    /// What one item is called ("Page", "Question").
    package var itemLabel: String
    package var help: String?
    package var elements: [FormElement]
    /// What an added row starts as.
    package var newItem: JSONValue
    /// A page of its own for a saved row, named by one of the row's members: an activity's page
    /// `activities/<activityId>`, a step's `activities/<activityId>/steps/<key>`.
    package struct RowPage: Sendable {
        /// The pages' folder under the study.
        package var path: String
        /// The row's member that names its page.
        package var member: JSONPointer
        /// What the link says after "Open step 3".
        package var what: String

        package init(path: String, member: String, what: String) {
            self.path = path
            self.member = JSONPointer(member)!
            self.what = what
        }
    }

    package var rowPage: RowPage?

    /// A tick box on each row that lists the row's value in a member of the item holding the list:
    /// a comprehension question's correct answers are the choices ticked. Nothing is typed twice,
    /// and a value renamed on its row stays ticked.
    package struct Mark: Sendable {
        /// The tick box's label ("Correct answer").
        package var label: String
        /// The array of values, in the item that holds the list (`/correctAnswers`).
        package var member: JSONPointer
        /// The row's value (`/value`).
        package var value: JSONPointer

        package init(_ label: String, member: String, value: String) {
            self.label = label
            self.member = JSONPointer(member)!
            self.value = JSONPointer(value)!
        }
    }

    package var mark: Mark?
    /// Rows drawn as the lines of a table, one column per element, for a list whose rows are
    /// edited on their own pages (`rowPage`; an activity's steps). A saved row is shown, moved and
    /// removed here, never changed: what it holds comes from the document, whatever a form says.
    /// A row added on the page has its fields, so it is whole when saved.
    package var table: Bool

    /// More rows than any study needs in one list; a form asking for more is cut here.
    package static let maxRows = 200

    package init(
        _ pointer: String, _ label: String, item itemLabel: String, help: String? = nil, newItem: JSONValue = .object([:]),
        rowPage: RowPage? = nil, table: Bool = false, mark: Mark? = nil, _ elements: [FormElement]
    ) {
        self.rowPage = rowPage
        self.mark = mark
        self.table = table
        self.pointer = JSONPointer(pointer)!
        self.label = label
        self.itemLabel = itemLabel
        self.help = help
        self.elements = elements
        self.newItem = newItem
    }

    package func name(at prefix: JSONPointer) -> String { prefix.appending(pointer).description }

    package func values(in item: JSONValue, at prefix: JSONPointer) -> [(name: String, value: String)] {
        let name = name(at: prefix)
        guard case .array(let rows) = item[pointer: pointer] else { return [(name + "#count", "0")] }
        var pairs: [(name: String, value: String)] = [(name + "#count", String(rows.count))]
        let marked = mark.map { Set((item[pointer: $0.member]?.array ?? []).compactMap(\.text)) } ?? []
        for (index, row) in rows.enumerated() {
            let rowPointer = prefix.appending(pointer).appending(index)
            pairs.append((rowPointer.description + "#from", String(index)))
            if let mark, let value = row[pointer: mark.value]?.text, marked.contains(value) {
                pairs.append((rowPointer.description + "#mark", "true"))
            }
            for element in elements { pairs += element.values(in: row, at: rowPointer) }
        }
        return pairs
    }

    /// The list as the form has it. A form without the list's count (a crafted one) leaves the
    /// list as it is.
    package func apply(_ form: FormFields, at prefix: JSONPointer, to item: inout JSONValue) throws(JSONValue.PointerError) {
        let name = name(at: prefix)
        guard let countText = form[name + "#count"], let count = WholeNumber.parse(countText, in: 0...Int.max) else { return }
        // A list left out stays out while it is empty.
        if count == 0, item[pointer: pointer] == nil { return }
        let original: [JSONValue]
        if case .array(let rows) = item[pointer: pointer] { original = rows } else { original = [] }
        var rows: [JSONValue] = []
        var marked: [JSONValue] = []
        // How many rows at the end were added on the page and left as they were drawn.
        var blankAtEnd = 0
        for index in 0..<min(count, Self.maxRows) {
            let rowPointer = prefix.appending(pointer).appending(index)
            let saved = form[rowPointer.description + "#from"].flatMap { WholeNumber.parse($0, in: 0...FormList.maxRows) }.flatMap { original.indices.contains($0) ? original[$0] : nil }
            if table, let saved {
                rows.append(saved)
                blankAtEnd = 0
                continue
            }
            var row = saved ?? newItem
            for element in elements { try element.apply(form, at: rowPointer, to: &row) }
            rows.append(row)
            blankAtEnd = saved == nil && isUntouched(form, at: rowPointer) ? blankAtEnd + 1 : 0
            if let mark, form[rowPointer.description + "#mark"] == "true", let value = row[pointer: mark.value], !marked.contains(value) {
                marked.append(value)
            }
        }
        // A row added and never touched is not saved, so it cannot keep the page from saving.
        // Only those after the last row kept: the rows before keep their numbers, which the
        // problems of a refused save name.
        rows.removeLast(blankAtEnd)
        if rows.isEmpty, original.isEmpty, item[pointer: pointer] == nil { return }
        try item.set(.array(rows), at: pointer)
        if let mark { try item.set(.array(marked), at: mark.member) }
    }
}

/// What a page's buttons change before anything is saved: rows added, removed and moved (the
/// submitted form with its rows renamed), or the fields of another case shown.
package enum FormEdit: Equatable, Sendable {
    case add(list: String)
    case remove(list: String, row: Int)
    case move(list: String, row: Int, to: Int)
    /// The fields of the case now chosen in a variant (the page draws the chosen case's fields).
    case show(variant: String)

    /// Reads the `op` of a submit button: `add /overview`, `remove /overview/2`, `up /overview/2`,
    /// `down /overview/2`, `show /activities/0/steps/1/resultType`.
    package init?(_ op: String) {
        let parts = op.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let pointer = JSONPointer(parts[1]), !pointer.tokens.isEmpty else { return nil }
        if parts[0] == "add" {
            self = .add(list: pointer.description)
            return
        }
        if parts[0] == "show" {
            self = .show(variant: pointer.description)
            return
        }
        // A row index names one of at most `maxRows` rows: bounded here, `row + 1` cannot overflow.
        guard let last = pointer.tokens.last, let row = WholeNumber.parse(last, in: 0...FormList.maxRows - 1) else { return nil }
        let list = JSONPointer(tokens: Array(pointer.tokens.dropLast())).description
        switch parts[0] {
        case "remove": self = .remove(list: list, row: row)
        case "up": self = .move(list: list, row: row, to: row - 1)
        case "down": self = .move(list: list, row: row, to: row + 1)
        default: return nil
        }
    }

    /// The form with the edit made; nil when it cannot be (no such row, or the list is full).
    package func applied(to form: FormFields) -> FormFields? {
        switch self {
        case .show(let variant):
            return form[variant] == nil ? nil : form
        case .add(let list):
            guard let count = Self.count(of: list, in: form), count < FormList.maxRows else { return nil }
            var pairs = form.pairs.filter { $0.name != list + "#count" }
            pairs.append((list + "#count", String(count + 1)))
            pairs.append(("\(list)/\(count)#from", ""))
            return FormFields(pairs)
        case .remove(let list, let row):
            guard let count = Self.count(of: list, in: form), (0..<count).contains(row) else { return nil }
            var pairs: [(name: String, value: String)] = []
            for pair in form.pairs {
                if pair.name == list + "#count" {
                    pairs.append((pair.name, String(count - 1)))
                } else if let index = Self.row(of: pair.name, in: list) {
                    if index == row { continue }
                    pairs.append((index > row ? Self.renamed(pair.name, in: list, from: index, to: index - 1) : pair.name, pair.value))
                } else {
                    pairs.append(pair)
                }
            }
            return FormFields(pairs)
        case .move(let list, let row, let target):
            guard let count = Self.count(of: list, in: form), (0..<count).contains(row), (0..<count).contains(target) else {
                return nil
            }
            return FormFields(form.pairs.map { pair in
                switch Self.row(of: pair.name, in: list) {
                case row: (Self.renamed(pair.name, in: list, from: row, to: target), pair.value)
                case target: (Self.renamed(pair.name, in: list, from: target, to: row), pair.value)
                default: pair
                }
            })
        }
    }

    /// The rows the form says `list` has: a whole number from 0 to `FormList.maxRows` (a crafted
    /// count outside that names no list the page drew).
    package static func count(of list: String, in form: FormFields) -> Int? {
        form[list + "#count"].flatMap { WholeNumber.parse($0, in: 0...FormList.maxRows) }
    }

    /// The row of `list` an input belongs to (`/overview/2/title/en` → 2), if any.
    static func row(of name: String, in list: String) -> Int? {
        guard name.hasPrefix(list + "/") else { return nil }
        let rest = name.dropFirst(list.count + 1)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let index = WholeNumber.parse(digits, in: 0...FormList.maxRows) else { return nil }
        let after = rest.dropFirst(digits.count)
        guard after.isEmpty || after.first == "/" || after.first == "#" else { return nil }
        return index
    }

    static func renamed(_ name: String, in list: String, from: Int, to: Int) -> String {
        let rest = name.dropFirst(list.count + 1 + String(from).count)
        return "\(list)/\(to)\(rest)"
    }
}
