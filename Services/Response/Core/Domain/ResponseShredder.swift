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

    /// A date answer: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (exactly three fraction digits, an offset like
    /// `+0000`), or `yyyy-MM-dd` (midnight UTC), with the offset in minutes east of UTC. Unlike
    /// the newer original, the offset is kept: the instant and the wall clock both read back.
    ///
    /// Read byte by byte and counted in days of the proleptic Gregorian calendar, without a
    /// `Calendar`: every answer and every result's start and end time is read here (sixty times
    /// for a 30-question response), and building date components took a third of processing.
    package static func answerDateAndOffset(_ text: String) -> (date: Date, offsetMinutes: Int)? {
        var text = text
        return text.withUTF8 { bytes -> (date: Date, offsetMinutes: Int)? in
            guard bytes.count == 10 || bytes.count == 28 else { return nil }
            func digits(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<start + count {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
                let day = digits(8, 2), year >= 1, (1...12).contains(month), day >= 1,
                day <= GregorianDays.days(inMonth: month, year: year)
            else { return nil }
            let midnight = Double(GregorianDays.days(year: year, month: month, day: day) * 86_400)
            guard bytes.count == 28 else { return (Date(timeIntervalSince1970: midnight), 0) }
            let sign = bytes[23]
            guard bytes[10] == UInt8(ascii: "T"), let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"),
                let minute = digits(14, 2), bytes[16] == UInt8(ascii: ":"), let second = digits(17, 2),
                bytes[19] == UInt8(ascii: "."), let millis = digits(20, 3), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
                let offsetHours = digits(24, 2), let offsetMinutes = digits(26, 2),
                hour < 24, minute < 60, second < 60, offsetHours < 24, offsetMinutes < 60
            else { return nil }
            let offset = (offsetHours * 60 + offsetMinutes) * (sign == UInt8(ascii: "-") ? -1 : 1)
            let seconds = Double(hour * 3_600 + minute * 60 + second - offset * 60)
            return (Date(timeIntervalSince1970: midnight + seconds + Double(millis) / 1_000), offset)
        }
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
