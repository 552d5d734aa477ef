import Foundation
import StudyModels

/// Turns a response's `data` into rows of the study's lists, with the original's rules and
/// messages (docs/response-api.md, Processing into tables): one row in the list the response's activity names,
/// a child row per form repetition, task result or chosen option, every value type-checked
/// against its column. Pure: it plans rows and reports every problem; `ResponseWriter` inserts a
/// plan only when it has none.
package struct ResponseShredder: Sendable {
    package enum Cell: Sendable, Equatable {
        case null
        case double(Double)
        case text(String)
        case bool(Bool)
        /// An instant, and for a date answer the offset it was given at (minutes east of UTC).
        case timestamp(Date, offsetMinutes: Int? = nil)
    }

    /// A result's timing, as the original's ResponseMetadata kept it.
    package struct FieldMetadata: Sendable, Equatable {
        package var listName: String
        package var field: String
        package var startTime: Date?
        package var endTime: Date?
        package var skipped: Bool
    }

    /// One row to insert, and the rows that belong to it.
    package struct Row: Sendable {
        package var list: StudyTables.StoredList
        package var values: [(column: StudyTables.StoredColumn, value: Cell)]
        package var metadata: [FieldMetadata]
        package var children: [Row]
    }

    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// The study's lists by name, in any case (`NamesInAnyCase`).
    package let lists: NamesInAnyCase<StudyTables.StoredList>
    /// Stands in the messages where the original named its folder.
    package let container: String

    /// The choice values of the activity's Sage assessment, where it was imported from one
    /// (`SageAnswers.ChoiceValues`): what tells a choice from "other" free text in an archive.
    package let sageChoices: SageAnswers.ChoiceValues

    package init(lists: NamesInAnyCase<StudyTables.StoredList>, container: String, sageChoices: SageAnswers.ChoiceValues = [:]) {
        self.lists = lists
        self.container = container
        self.sageChoices = sageChoices
    }

    package static let multiValued: Set<String> = ["textchoice", "grouped", "fetalkickcounter", "spatialspanmemory", "towerofhanoi"]

    /// The most values one multi-valued result may hold (selections, repetitions, task rounds),
    /// and the most rows one response may become. Not in the original: a participant's upload is
    /// bounded only by the body limit, and one response of thousands of selections held the
    /// processing of every study. No design comes near them (a choice question with 500 options).
    package static let maxValuesPerResult = 500
    package static let maxRowsPerResponse = 5_000

    package func plan(activityId: String, data: JSONValue) throws(Failure) -> Row {
        guard let top = lists[activityId.lowercased()] else {
            throw Failure(description: "Invalid list '\(activityId)' for container '\(container)'")
        }
        let prefix = "Problem storing data in list '\(activityId)' in container '\(container)'.\n"
        let results: [JSONValue]
        if case .array(let answers)? = data[SageAnswers.member] {
            results = SageAnswers.results(answers, top: top, lists: lists, listed: sageChoices)
        } else {
            guard case .array(let given)? = data["results"] else { throw Failure(description: prefix + "No results provided in response.") }
            results = given
        }
        var errors: [String] = []
        var row = group(top, results: results, errors: &errors)
        // The response's own times, kept only where a list has such columns (generated lists do not).
        for (key, value) in [("startTime", data["startTime"] ?? data["start"]), ("endTime", data["endTime"] ?? data["end"])] {
            if let column = top.columns[key.lowercased()], !column.system, let date = value?.text.flatMap(Self.instant) {
                row.values.append((column, .timestamp(date)))
            }
        }
        guard errors.isEmpty else { throw Failure(description: prefix + errors.joined(separator: "\n")) }
        let count = Self.rowCount(row)
        guard count <= Self.maxRowsPerResponse else {
            throw Failure(description: prefix + "The response makes \(count) rows; at most \(Self.maxRowsPerResponse) are stored.")
        }
        return row
    }

    package static func rowCount(_ row: Row) -> Int {
        row.children.reduce(1) { $0 + rowCount($1) }
    }

    /// One row of `list` from `results`, and its children.
    private func group(_ list: StudyTables.StoredList, results: [JSONValue], errors: inout [String]) -> Row {
        var row = Row(list: list, values: [], metadata: [], children: [])
        var multi: [(result: JSONValue, type: String)] = []
        for result in results {
            // Instruction steps: no result type, or (as the iOS app sends them) the string "null".
            // The original took "null" for an unknown type and failed the whole response for want
            // of a column; an instruction step has none to fill.
            guard let type = result["resultType"]?.text, !type.isEmpty, type.lowercased() != "null" else { continue }
            if Self.multiValued.contains(type.lowercased()) {
                multi.append((result, type.lowercased()))
                continue
            }
            let key = result["key"]?.text ?? "null"
            guard let column = list.columns[key.lowercased()], !column.system else {
                errors.append("Unable to find column '\(key)' in list '\(list.name)'")
                continue
            }
            let expected = Self.expectedStorage(type)
            guard column.storage == expected || (expected == "TIMESTAMP" && column.storage == "DATE") else {
                errors.append("Type '\(type)' (\(expected)) of result '\(key)' does not match expected type (\(column.storage))")
                continue
            }
            let skipped = result["skipped"] == .bool(true)
            do {
                let cell = skipped ? Cell.null : try Self.cell(result["value"], type: type.lowercased(), key: key)
                // A later duplicate wins; a column only canonically equal to another is another column.
                row.values.removeAll { $0.column.sqlName.utf8.elementsEqual(column.sqlName.utf8) }
                row.values.append((column, cell))
            } catch {
                errors.append(error.description)
            }
            row.metadata.append(metadata(result, list: list, key: key))
        }
        for (result, type) in multi {
            let key = result["key"]?.text ?? "null"
            let skipped = result["skipped"] == .bool(true)
            row.metadata.append(metadata(result, list: list, key: key))
            if skipped { continue }
            let childName = list.name + key.prefix(1).uppercased() + key.dropFirst()
            guard let child = lists[childName.lowercased()] else {
                errors.append("Invalid list '\(childName)' for container '\(container)'")
                continue
            }
            if type == "textchoice" {
                row.children += choices(result["value"], key: key, child: child, errors: &errors)
            } else {
                row.children += repetitions(result["value"], key: key, child: child, errors: &errors)
            }
        }
        return row
    }

    private func choices(_ value: JSONValue?, key: String, child: StudyTables.StoredList, errors: inout [String]) -> [Row] {
        guard let value, value != .null else { return [] }
        guard case .array(let elements) = value else {
            errors.append("Value type for choice field '\(key)' expected to be ArrayList but got class \(Self.javaClass(value))")
            return []
        }
        guard elements.count <= Self.maxValuesPerResult else {
            errors.append("Choice field '\(key)' has \(elements.count) selections; at most \(Self.maxValuesPerResult) are stored")
            return []
        }
        guard let column = child.columns[key.lowercased()], column.storage == "VARCHAR" else {
            errors.append("Unable to find column '\(key)' in list '\(child.name)'")
            return []
        }
        let otherColumn = child.columns["\(key)_other_text".lowercased()]
        return elements.map { element in
            var values: [(StudyTables.StoredColumn, Cell)] = []
            if case .object(let other) = element {
                // An "other" answer without its option's value keeps no choice (NULL, not empty text).
                values.append((column, other["other"]?.text.map(Cell.text) ?? .null))
                if let otherColumn, let text = other["text"]?.text, !text.trimmingCharacters(in: .whitespaces).isEmpty {
                    values.append((otherColumn, .text(text)))
                }
            } else {
                values.append((column, element.text.map(Cell.text) ?? .null))
            }
            return Row(list: child, values: values, metadata: [], children: [])
        }
    }

    private func repetitions(_ value: JSONValue?, key: String, child: StudyTables.StoredList, errors: inout [String]) -> [Row] {
        guard let value, value != .null else {
            errors.append("NullPointerException")
            return []
        }
        guard case .array(let elements) = value else {
            errors.append("Value type for grouped result field '\(key)' expected to be ArrayList but got class \(Self.javaClass(value))")
            return []
        }
        guard !elements.isEmpty else { return [] }
        guard elements.count <= Self.maxValuesPerResult else {
            errors.append("Grouped result field '\(key)' has \(elements.count) values; at most \(Self.maxValuesPerResult) are stored")
            return []
        }
        // A list of result objects is one row; a list of lists is one row per inner list.
        if elements.allSatisfy({ if case .object = $0 { true } else { false } }) {
            return [group(child, results: elements, errors: &errors)]
        }
        var rows: [Row] = []
        for element in elements {
            switch element {
            case .array(let inner): rows.append(group(child, results: inner, errors: &errors))
            case .object: rows.append(group(child, results: [element], errors: &errors))
            default:
                errors.append(
                    "Value type for grouped result field '\(key)' expected to be ArrayList or HashMap but got class \(Self.javaClass(element))")
            }
        }
        return rows
    }

    private func metadata(_ result: JSONValue, list: StudyTables.StoredList, key: String) -> FieldMetadata {
        FieldMetadata(
            listName: list.name, field: key,
            startTime: (result["startTime"] ?? result["start"])?.text.flatMap(Self.instant),
            endTime: (result["endTime"] ?? result["end"])?.text.flatMap(Self.instant),
            skipped: result["skipped"] == .bool(true))
    }

    /// The storage a result type needs: what the design would have created for it.
    package static func expectedStorage(_ resultType: String) -> String {
        switch resultType.lowercased() {
        case "scale", "continuousscale", "timeinterval", "height", "numeric": "DOUBLE"
        case "date": "TIMESTAMP"
        case "boolean": "BOOLEAN"
        default: "VARCHAR"
        }
    }

    package static func cell(_ value: JSONValue?, type: String, key: String) throws(Failure) -> Cell {
        guard let value, value != .null else { return .null }
        switch type {
        case "date":
            guard case .string(let text) = value else {
                throw Failure(description: "Value type for Date field '\(key)' expected to be String but got class \(javaClass(value))")
            }
            guard let (date, offset) = answerDateAndOffset(text) else {
                throw Failure(description: "Invalid date string format for field '\(key)' (\(text))")
            }
            return .timestamp(date, offsetMinutes: offset)
        case "boolean":
            guard case .bool(let flag) = value else {
                throw Failure(description: "Value type for field '\(key)' expected to be Boolean but got class \(javaClass(value))")
            }
            return .bool(flag)
        case "scale", "continuousscale", "timeinterval", "height", "numeric":
            guard case .number(let number) = value, javaClass(value) != "java.lang.Long" else {
                throw Failure(
                    description: "Value type for field '\(key)' expected to be Integer or Float but got class \(javaClass(value))")
            }
            return .double(number.double)
        default:
            guard case .string(let text) = value else {
                throw Failure(description: "Value type for field '\(key)' expected to be String but got class \(javaClass(value))")
            }
            return .text(text)
        }
    }

    /// The Java class Jackson would have produced for a JSON value (the original's messages name it).
    package static func javaClass(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "java.lang.Boolean"
        case .string: "java.lang.String"
        case .array: "java.util.ArrayList"
        case .object: "java.util.LinkedHashMap"
        case .number(let number):
            if !number.isWhole { "java.lang.Double" } else if abs(number.double) <= Double(Int32.max) { "java.lang.Integer" } else { "java.lang.Long" }
        }
    }

    package static func answerDate(_ text: String) -> Date? {
        answerDateAndOffset(text)?.date
    }

    /// A date answer with its offset in minutes east of UTC (`AppDates.instantAndOffset`).
    package static func answerDateAndOffset(_ text: String) -> (date: Date, offsetMinutes: Int)? {
        AppDates.instantAndOffset(text)
    }

    /// Result and response times: ISO 8601, with or without milliseconds, any offset form.
    package static func instant(_ text: String) -> Date? {
        if let date = answerDate(text), text.count > 10 { return date }
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
            [.withFullDate, .withTime, .withTimeZone, .withDashSeparatorInDate, .withColonSeparatorInTime],
        ] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
