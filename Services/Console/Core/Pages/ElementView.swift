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
    package var isVariant = false
    package var variant: [VariantView] = []

    package static func make(
        _ element: FormElement, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool,
        readOnly: Bool, references: FormReferences = .none
    ) -> ElementView {
        switch element {
        case .field(let field):
            return ElementView(
                isField: true,
                field: [FieldView(field: field, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)],
                isList: false, list: [])
        case .list(let list):
            return ElementView(
                isField: false, field: [], isList: true,
                list: [ListView(list: list, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)])
        case .group(let group):
            return ElementView(
                isField: false, field: [], isList: false, list: [], isGroup: true,
                group: [GroupView(group: group, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)])
        case .variant(let variant):
            return ElementView(
                isField: false, field: [], isList: false, list: [], isVariant: true,
                variant: [VariantView(variant: variant, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)])
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
        /// The row's own page, under the study (`activities/sleep`); empty for a row not saved yet.
        package var rowPage: String
        package var hasRowPage: Bool
        package var rowPageLabel: String
        /// The row's tick box (`FormList.Mark`): its input's name, label, and whether it is ticked.
        package var hasMark: Bool
        package var markName: String
        package var markLabel: String
        package var marked: Bool
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
    /// Drawn as a table; `columns`: the heading of each element's column.
    package var table: Bool
    package var columns: [String]
    /// The row a new item starts as, drawn once into a `<template>` so the page's script adds a
    /// row without a round trip: its names and ids hold `newRowToken` where the row's index goes,
    /// and its title `newRowNumber` where its number goes. Empty when the list cannot grow here.
    package var newRow: [RowView]
    package var newRowToken: String
    package var newRowNumber: String

    init(list: FormList, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool, references: FormReferences) {
        let absolute = prefix.appending(list.pointer)
        let name = absolute.description
        id = FieldView.elementID(absolute)
        label = list.label
        help = list.help ?? ""
        hasHelp = list.help != nil
        countName = name + "#count"
        count = values[countName].flatMap { WholeNumber.parse($0, in: 0...FormList.maxRows) } ?? 0
        addOp = "add \(name)"
        addLabel = "Add \(list.itemLabel.lowercased())"
        self.readOnly = readOnly
        listProblems = problems.filter { $0.pointer == name }.map(\.message)
        listInvalid = !listProblems.isEmpty
        table = list.table
        columns = list.elements.map(\.label)
        var rows: [RowView] = []
        for index in 0..<count {
            let row = absolute.appending(index)
            // A table's saved row is changed on its own page: here its values are shown.
            let shownOnly = readOnly || (list.table && !(values[row.description + "#from"] ?? "").isEmpty)
            let elements = list.elements.map {
                ElementView.make($0, at: row, values: values, problems: problems, spanish: spanish, readOnly: shownOnly, references: references)
            }
            let rowProblems = problems.filter { $0.pointer == row.description }.map(\.message)
            var rowPage = ""
            if let page = list.rowPage, !(values[row.description + "#from"] ?? "").isEmpty,
                let id = values[JSONPointer(tokens: row.tokens + page.member.tokens).description], !id.isEmpty
            {
                rowPage = page.path + "/" + AdminAPIClient.segment(id)
            }
            rows.append(RowView(
                id: FieldView.elementID(row), title: "\(list.itemLabel) \(index + 1)", fromName: row.description + "#from",
                fromValue: values[row.description + "#from"] ?? "", elements: elements, removeOp: "remove \(row)",
                upOp: "up \(row)", downOp: "down \(row)", isFirst: index == 0, isLast: index == count - 1,
                rowProblems: rowProblems, rowInvalid: !rowProblems.isEmpty, rowPage: rowPage, hasRowPage: !rowPage.isEmpty,
                rowPageLabel: "Open \(list.itemLabel.lowercased()) \(index + 1): \(list.rowPage?.what ?? "")",
                hasMark: list.mark != nil, markName: row.description + "#mark", markLabel: list.mark?.label ?? "",
                marked: values[row.description + "#mark"] == "true"))
        }
        self.rows = rows
        hasRows = !rows.isEmpty
        // One placeholder per nesting level (a new question's new choice has two), so adding a row
        // fills in its own level's index and leaves the rows of its nested lists to their lists.
        newRowToken = "__ROW\(absolute.tokens.count)__"
        newRowNumber = "__NUMBER\(absolute.tokens.count)__"
        if readOnly || count >= FormList.maxRows {
            newRow = []
        } else {
            let row = absolute.appending(newRowToken)
            var fresh = FormFields(list.elements.flatMap { $0.values(in: list.newItem, at: row) })
            fresh.set(row.description + "#from", "")
            newRow = [RowView(
                id: FieldView.elementID(row), title: "\(list.itemLabel) \(newRowNumber)", fromName: row.description + "#from",
                fromValue: "",
                elements: list.elements.map {
                    ElementView.make($0, at: row, values: fresh, problems: [], spanish: spanish, readOnly: false, references: references)
                },
                removeOp: "remove \(row)", upOp: "up \(row)", downOp: "down \(row)", isFirst: false, isLast: true,
                rowProblems: [], rowInvalid: false, rowPage: "", hasRowPage: false, rowPageLabel: "",
                hasMark: list.mark != nil, markName: row.description + "#mark", markLabel: list.mark?.label ?? "", marked: false)]
        }
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

    init(group: FormGroup, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool, references: FormReferences) {
        let name = group.name(at: prefix)
        id = FieldView.elementID(prefix.appending(group.pointer))
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
            ElementView.make($0, at: prefix.appending(group.pointer), values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)
        }
    }
}

/// A variant: the select that chooses the case, and the chosen case's fields. The page always
/// draws the case the select shows, and says so in its marker.
package struct VariantView: Sendable {
    package var id: String
    package var label: String
    package var help: String
    package var hasHelp: Bool
    package var name: String
    package var options: [FieldView.OptionView]
    package var markerName: String
    package var markerValue: String
    package var showOp: String
    package var shown: String
    package var elements: [ElementView]
    package var readOnly: Bool
    package var problems: [String]
    package var invalid: Bool

    init(variant: FormVariant, at prefix: JSONPointer, values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool, references: FormReferences) {
        let name = variant.name(at: prefix)
        self.name = name
        id = FieldView.elementID(prefix.appending(variant.discriminator))
        label = variant.label
        help = variant.help ?? ""
        hasHelp = variant.help != nil
        let chosen = values[name] ?? ""
        var cases = variant.cases
        if !chosen.isEmpty, !cases.contains(where: { $0.value == chosen }) { cases.insert(.init(chosen, chosen), at: 0) }
        options = cases.map { .init(value: $0.value, label: $0.label, selected: $0.value == chosen) }
        markerName = name + "#variant"
        markerValue = chosen
        showOp = "show \(name)"
        shown = cases.first { $0.value == chosen }?.label ?? ""
        self.readOnly = readOnly
        self.problems = problems.filter { $0.pointer == name }.map(\.message)
        invalid = !self.problems.isEmpty
        // The fields of the chosen case, with what the form holds for them.
        elements = (variant.cases.first { $0.value == chosen }?.elements ?? []).map {
            ElementView.make($0, at: prefix, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)
        }
    }
}
