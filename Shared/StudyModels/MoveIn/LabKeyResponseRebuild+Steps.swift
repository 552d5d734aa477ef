import Foundation
import JSONText

/// One response's steps read back from its row and the rows below it, in the shapes the apps send:
/// a single answer from its column; a choice question's options from its list (`<list><key>`), an
/// "other" option with its text as `{"other", "text"}`; a form's repetitions from its list, each
/// its own results; an active task's rounds from its list.
struct Walk {
    let lists: [ScalarKey: LabKeyListExport.Table]
    let metadata: MetadataIndex
    let times: LabKeyTimes
    /// Values that could not be read, counted by where and why.
    private(set) var problems: [String: Int] = [:]
    private var topKey = ""
    /// How many `ResponseMetadata` rows of each list and field the response has used.
    private var used: [ScalarKey: [ScalarKey: Int]] = [:]
    /// The rows of each list below another, by the key of the row they belong to, in key order.
    private var children: [ScalarKey: [String: [[String]]]] = [:]

    init(lists: [ScalarKey: LabKeyListExport.Table], metadata: MetadataIndex, times: LabKeyTimes) {
        self.lists = lists
        self.metadata = metadata
        self.times = times
    }

    /// The columns of the lists the server made for active tasks, with their results' types.
    static let taskColumns: [ScalarKey: [(key: String, resultType: String)]] = [
        "fetalkickcounter": [("duration", "numeric"), ("count", "numeric")],
        "spatialspanmemory": [("score", "numeric"), ("numberOfGames", "numeric"), ("numberOfFailures", "numeric")],
        "towerofhanoi": [("puzzleWasSolved", "boolean"), ("numberOfMoves", "numeric")],
    ]

    mutating func begin(topKey: String) {
        self.topKey = topKey
        used = [:]
    }

    mutating func results(_ steps: [JSONValue], list: LabKeyListExport.Table, row: [String]) -> [JSONValue] {
        var answers: [JSONValue] = []
        for step in steps {
            guard let key = step["key"]?.string, !key.isEmpty, step["type"]?.string?.lowercased() != "instruction" else { continue }
            let resultType = step["resultType"]?.string ?? ""
            let kind = LabKeyResponseRebuild.name(resultType)
            let timing = nextMetadata(list: list.name, field: key)
            var value: JSONValue?
            if timing?.skipped != true {
                switch kind {
                case "textchoice": value = choices(list: list, row: row, key: key)
                case "grouped":
                    var repetitions: [JSONValue] = []
                    for child in rows(below: list, row: row, key: key) {
                        repetitions.append(.array(results(step["steps"]?.array ?? [], list: child.list, row: child.row)))
                    }
                    value = .array(repetitions)
                case let task where Self.taskColumns[task] != nil:
                    var rounds: [JSONValue] = []
                    for child in rows(below: list, row: row, key: key) {
                        let columns = (Self.taskColumns[task] ?? []).map { column in
                            JSONValue.object(JSONObject(pairs: [("type", .string("question")), ("resultType", .string(column.resultType)), ("key", .string(column.key))]))
                        }
                        rounds.append(.array(results(columns, list: child.list, row: child.row)))
                    }
                    // One round is sent as its results, several as a list of them.
                    value = rounds.count == 1 ? rounds[0] : .array(rounds)
                default:
                    let text = list.column(key).map { row[$0] } ?? ""
                    value = single(text, resultType: resultType, format: step["format"], at: "lists/\(list.name)#\(key)")
                }
            }
            var pairs: [(String, JSONValue)] = [("resultType", .string(resultType)), ("key", .string(key))]
            // A form or a task has no times of its own unless skipped: its answers' span them.
            let span = timing == nil ? Self.span(value) : nil
            if let start = timing.flatMap({ times.instant($0.start) }).map(times.wire) ?? span?.start { pairs.append(("startTime", .string(start))) }
            if let end = timing.flatMap({ times.instant($0.end) }).map(times.wire) ?? span?.end { pairs.append(("endTime", .string(end))) }
            pairs.append(("skipped", .bool(timing?.skipped ?? false)))
            pairs.append(("value", value ?? .null))
            answers.append(.object(JSONObject(pairs: pairs)))
        }
        return answers
    }

    /// The earliest start and the latest end of the answers within a form's or a task's value.
    static func span(_ value: JSONValue?) -> (start: String, end: String)? {
        var starts: [(Date, String)] = [], ends: [(Date, String)] = []
        func visit(_ value: JSONValue?) {
            switch value {
            case .array(let items)?: items.forEach(visit)
            case .object(let members)?:
                if let text = members["startTime"]?.string, let date = WireInstants.instant(text) { starts.append((date, text)) }
                if let text = members["endTime"]?.string, let date = WireInstants.instant(text) { ends.append((date, text)) }
                visit(members["value"])
            default: break
            }
        }
        visit(value)
        guard let start = starts.min(by: { $0.0 < $1.0 }), let end = ends.max(by: { $0.0 < $1.0 }) else { return nil }
        return (start.1, end.1)
    }

    /// The next `ResponseMetadata` row of the field in this list: a form repeated has one a
    /// repetition, in the order they were stored.
    private mutating func nextMetadata(list: String, field: String) -> MetadataIndex.Entry? {
        let listName = LabKeyResponseRebuild.name(list), fieldName = LabKeyResponseRebuild.name(field)
        let entries = metadata.entries[MetadataIndex.Place(list: listName, topKey: topKey)] ?? []
        let skip = used[listName]?[fieldName] ?? 0
        used[listName, default: [:]][fieldName] = skip + 1
        return entries.lazy.filter { $0.field == fieldName }.dropFirst(skip).first
    }

    private mutating func choices(list: LabKeyListExport.Table, row: [String], key: String) -> JSONValue {
        .array(
            rows(below: list, row: row, key: key).map { child in
                let choice = child.list.column(key).map { child.row[$0] } ?? ""
                let other = child.list.column(key + "_Other_Text").map { child.row[$0] } ?? ""
                return other.isEmpty ? .string(choice) : .object(JSONObject(pairs: [("other", .string(choice)), ("text", .string(other))]))
            })
    }

    /// The rows of `<list><key>` that point to `row` (by `<list>Id`), in key order.
    private mutating func rows(below list: LabKeyListExport.Table, row: [String], key: String) -> [(list: LabKeyListExport.Table, row: [String])] {
        let childName = LabKeyResponseRebuild.name(list.name + key)
        guard let child = lists[childName], let parentKey = list.column("Key").map({ row[$0] }) else { return [] }
        if children[childName] == nil {
            var grouped: [String: [[String]]] = [:]
            if let parent = child.column(list.name + "Id") {
                let keyColumn = child.column("Key")
                let sorted = child.rows.sorted { first, second in
                    keyColumn.map { (Int64(first[$0]) ?? 0) < (Int64(second[$0]) ?? 0) } ?? false
                }
                for childRow in sorted { grouped[childRow[parent], default: []].append(childRow) }
            }
            children[childName] = grouped
        }
        return (children[childName]?[parentKey] ?? []).map { (child, $0) }
    }

    /// One answer from its column's text, as the app sent it: a number (a whole one without a
    /// fraction: the server kept every number as a double), `true`/`false`, a date (`yyyy-MM-dd`) or
    /// a date and time in the server's zone, or text.
    private mutating func single(_ text: String, resultType: String, format: JSONValue?, at: String) -> JSONValue {
        guard !text.isEmpty else { return .null }
        let style = format?["style"]?.string
        switch LabKeyResponseRebuild.name(resultType) {
        case "numeric" where style == "Date" || style == "Date-Time", "date":
            guard let instant = times.instant(text) else { return unreadable(at, "a date") }
            return .string(style == "Date" ? String(text.prefix(10)) : times.wire(instant))
        case "numeric", "scale", "continuousscale", "timeinterval", "height":
            guard let number = JSONNumber(text: text) else { return unreadable(at, "a number") }
            if number.isWhole, abs(number.double) < 9e15 { return .number(JSONNumber(Double(Int64(number.double)))) }
            return .number(number)
        case "boolean":
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return unreadable(at, "true or false")
            }
        default:
            return .string(text)
        }
    }

    private mutating func unreadable(_ at: String, _ kind: String) -> JSONValue {
        problems["\(at)|not \(kind)", default: 0] += 1
        return .null
    }
}
