import Foundation
import JSONText
import StudyModels

/// What a template draws for one element of a page: a field, or a list with its rows (each row
/// drawn with the same template, so lists nest). Every member is set, none optional: a template
/// that finds no value looks in the elements around it.
package struct ElementView: Sendable {
    package var isField: Bool
    package var field: [FieldView]
    package var isList: Bool
    package var list: [ListView]
    package var isGroup = false
    package var group: [GroupView] = []

    package static func make(
        _ element: FormElement, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool,
        readOnly: Bool
    ) -> ElementView {
        switch element {
        case .field(let field):
            return ElementView(
                isField: true,
                field: [FieldView(field: field, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly)],
                isList: false, list: [])
        case .list(let list):
            return ElementView(
                isField: false, field: [], isList: true,
                list: [ListView(list: list, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly)])
        case .group(let group):
            return ElementView(
                isField: false, field: [], isList: false, list: [], isGroup: true,
                group: [GroupView(group: group, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly)])
        }
    }
}

package struct ListView: Sendable {
    package struct RowView: Sendable {
        package var id: String
        package var title: String
        package var fromName: String
        package var fromValue: String
        package var elements: [ElementView]
        package var removeOp: String
        package var upOp: String
        package var downOp: String
        package var isFirst: Bool
        package var isLast: Bool
        package var rowProblems: [String]
        package var rowInvalid: Bool
    }

    package var id: String
    package var label: String
    package var help: String
    package var hasHelp: Bool
    package var countName: String
    package var count: Int
    package var rows: [RowView]
    package var hasRows: Bool
    package var addOp: String
    package var addLabel: String
    package var readOnly: Bool
    /// Problems about the list itself (`/overview`: too many, none).
    package var listProblems: [String]
    package var listInvalid: Bool

    init(list: FormList, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool) {
        let name = list.name(at: prefix)
        let absolute = JSONPointer(name)!
        id = FieldView.elementID(absolute)
        label = list.label
        help = list.help ?? ""
        hasHelp = list.help != nil
        countName = name + "#count"
        count = min(values[countName].flatMap(Int.init) ?? 0, FormList.maxRows)
        addOp = "add \(name)"
        addLabel = "Add \(list.itemLabel.lowercased())"
        self.readOnly = readOnly
        listProblems = problems.filter { $0.pointer == name }.map(\.message)
        listInvalid = !listProblems.isEmpty
        var rows: [RowView] = []
        for index in 0..<count {
            let row = absolute.appending(index)
            let elements = list.elements.map {
                ElementView.make($0, at: row, values: values, problems: problems, spanish: spanish, readOnly: readOnly)
            }
            let rowProblems = problems.filter { $0.pointer == row.description }.map(\.message)
            rows.append(RowView(
                id: FieldView.elementID(row), title: "\(list.itemLabel) \(index + 1)", fromName: row.description + "#from",
                fromValue: values[row.description + "#from"] ?? "", elements: elements, removeOp: "remove \(row)",
                upOp: "up \(row)", downOp: "down \(row)", isFirst: index == 0, isLast: index == count - 1,
                rowProblems: rowProblems, rowInvalid: !rowProblems.isEmpty))
        }
        self.rows = rows
        hasRows = !rows.isEmpty
    }
}

package struct GroupView: Sendable {
    package var id: String
    package var label: String
    package var toggle: String
    package var help: String
    package var hasHelp: Bool
    package var markerName: String
    package var toggleName: String
    package var on: Bool
    package var shown: String
    package var elements: [ElementView]
    package var readOnly: Bool

    init(group: FormGroup, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool) {
        let name = group.name(at: prefix)
        id = FieldView.elementID(JSONPointer(name)!)
        label = group.label
        toggle = group.toggle
        help = group.help ?? ""
        hasHelp = group.help != nil
        markerName = name + "#group"
        toggleName = name + "#on"
        on = values[toggleName] == "true"
        shown = on ? "yes" : "no"
        self.readOnly = readOnly
        // A viewer sees the fields only when the object is there.
        elements = readOnly && !on ? [] : group.elements.map {
            ElementView.make($0, at: JSONPointer(name)!, values: values, problems: problems, spanish: spanish, readOnly: readOnly)
        }
    }
}
