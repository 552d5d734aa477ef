import JSONText

// A row added on a page and left blank: told apart from one the admin typed in, so saving
// drops it instead of refusing it (FormList.apply).

extension FormList {
    /// Whether the row at `rowPointer`, added on the page, is still as it was drawn: each value
    /// the form has for it empty, as drawn from `newItem`, or a select's first option (what a
    /// browser sends for a select left alone).
    func isUntouched(_ form: FormFields, at rowPointer: JSONPointer) -> Bool {
        let inside = rowPointer.description + "/"
        let marker = rowPointer.description + "#"
        var drawn: [String: String] = [:]
        for element in elements {
            for (name, value) in element.values(in: newItem, at: rowPointer) where drawn[name] == nil { drawn[name] = value }
        }
        var firstOptions: [String: String] = [:]
        for element in elements { firstOptions.merge(element.firstOptions(at: rowPointer)) { first, _ in first } }
        return form.pairs.allSatisfy { pair in
            guard pair.name.hasPrefix(inside) || pair.name.hasPrefix(marker) else { return true }
            return pair.value.isEmpty || drawn[pair.name] == pair.value || firstOptions[pair.name] == pair.value
        }
    }
}

extension FormElement {
    /// The first option of each select among the fields, by input name: what a browser sends
    /// for a select nobody touched whose drawn value it does not offer.
    func firstOptions(at prefix: JSONPointer) -> [String: String] {
        switch self {
        case .field(let field):
            switch field.kind {
            case .choice(let options), .numberChoice(let options):
                return options.first.map { [field.name(at: prefix): $0.value] } ?? [:]
            default:
                return [:]
            }
        case .list:
            return [:]
        case .group(let group):
            return group.elements.reduce(into: [:]) { found, element in
                found.merge(element.firstOptions(at: prefix.appending(group.pointer))) { first, _ in first }
            }
        case .variant(let variant):
            var found = variant.cases.first.map { [variant.name(at: prefix): $0.value] } ?? [:]
            for item in variant.cases {
                for element in item.elements { found.merge(element.firstOptions(at: prefix)) { first, _ in first } }
            }
            return found
        }
    }
}
