import Foundation
import JSONText
import SageAssessments
import StudyModels

/// A Sage assessment's answers in the study's tables (docs/sage.md, Result archives).
///
/// The tables have the shape the MyStudies apps' answers to the same activity would give them, so
/// an assessment both kinds of app run fills one set of tables: a column per question in the
/// activity's list, named by the step's key (its path with `_` for `/`); a choice question a child
/// list of its chosen values (`<activity><key>`), as a MyStudies text choice has. Storage follows
/// the question's input: numbers (integer, number, year, a scale, a duration in seconds) as
/// doubles, text and times of day as text.
///
/// An archive's answers are stored as they came (`sageAnswers` in the response's data) and put
/// into rows only when processed, by the storage of the column each one meets: that is where the
/// design is known, and the same answer can come typed (`assessmentResult.json`) or as the flat
/// text of the older `answers.json`.
package enum SageAnswers {
    /// The member of a response's data that holds an archive's answers.
    package static let member = "sageAnswers"

    // MARK: The tables an assessment needs

    /// The lists of `activityId` from its assessment document: the top list first, then each
    /// choice question's list.
    package static func lists(activityId: String, assessment: JSONValue) throws(SurveySchema.DesignError) -> [SurveySchema.List] {
        var top = SurveySchema.List(name: activityId, parent: nil, columns: [])
        var children: [SurveySchema.List] = []
        // In any case, as the tables match names; otherwise by scalars (`NamesInAnyCase`).
        var seen: Set<ScalarKey> = []
        func walk(_ nodes: [JSONValue], prefix: String) throws(SurveySchema.DesignError) {
            for node in nodes {
                guard let identifier = node["identifier"]?.string else { continue }
                let key = prefix + identifier
                switch node["type"]?.string {
                case "section":
                    try walk(node["steps"]?.array ?? [], prefix: key + "_")
                    continue
                case "simpleQuestion":
                    guard seen.insert(ScalarKey(key.lowercased())).inserted else { throw .duplicate(key) }
                    top.columns.append(SurveySchema.Column(name: key, storage: storage(ofInput: node["inputItem"])))
                case "choiceQuestion":
                    guard seen.insert(ScalarKey(key.lowercased())).inserted else { throw .duplicate(key) }
                    var columns = [SurveySchema.Column(name: key, storage: .varchar(nil))]
                    if node["other"] != nil {
                        columns.append(SurveySchema.Column(name: "\(key)_Other_Text", storage: .varchar(SurveySchema.maxVarchar)))
                    }
                    children.append(SurveySchema.List(name: activityId + key, parent: activityId, columns: columns))
                default:
                    continue  // Instructions, countdowns, permissions: no answer to keep.
                }
            }
        }
        try walk(assessment["steps"]?.array ?? [], prefix: "")
        return [top] + children
    }

    /// How a simple question's answer is kept, by its input item's type.
    static func storage(ofInput item: JSONValue?) -> SurveySchema.Storage {
        switch item?["type"]?.string {
        case "integer", "number", "year", "duration": .double
        case "string":
            .varchar(item?["characterLimit"]?.integer.flatMap { (1...SurveySchema.maxVarchar).contains($0) ? $0 : nil })
        default: .varchar(nil)
        }
    }

    // MARK: The choices a question lists

    /// Each choice question's listed values (as the text a choice column holds), by its key in
    /// lower case as the tables match it. Sage's clients write a choice question's "other" free
    /// text as one more value beside the chosen ones (the whole answer of a single choice), so a
    /// value not listed here is that free text.
    package typealias ChoiceValues = [String: Set<ScalarKey>]

    /// The listed values of every choice question of an assessment document.
    package static func choiceValues(assessment: JSONValue) -> ChoiceValues {
        var found: ChoiceValues = [:]
        func walk(_ nodes: [JSONValue], prefix: String) {
            for node in nodes {
                guard let identifier = node["identifier"]?.string else { continue }
                let key = prefix + identifier
                switch node["type"]?.string {
                case "section": walk(node["steps"]?.array ?? [], prefix: key + "_")
                case "choiceQuestion":
                    found[key.lowercased()] = Set((node["choices"]?.array ?? []).compactMap { choice in
                        choice["value"].flatMap { $0 == .null ? nil : ScalarKey(text($0)) }
                    })
                default: continue
                }
            }
        }
        walk(assessment["steps"]?.array ?? [], prefix: "")
        return found
    }

    // MARK: An archive's answers as results

    /// An answer as kept in the response's data until processing.
    package static func stored(_ answer: (path: String, value: JSONValue, answerType: String?), start: String?, end: String?) -> JSONValue {
        var object: JSONObject = ["path": .string(answer.path), "value": answer.value]
        if let type = answer.answerType { object["answerType"] = .string(type) }
        if let start { object["startDate"] = .string(start) }
        if let end { object["endDate"] = .string(end) }
        return .object(object)
    }

    /// The stored answers as results of the kind each column takes, for `ResponseShredder`. An
    /// answer that fits no column is passed on as text under its key, and the shredder reports it
    /// with the list it was looked for in.
    /// `listed` are the design's choice values (`choiceValues`): where a question takes "other"
    /// (its list has an `_Other_Text` column), a value it does not list is the free text, kept
    /// in that column beside the choice the import gives "other" (`AssessmentImport.otherChoiceValue`),
    /// so the row is the one the MyStudies apps' answer to the same question makes.
    package static func results(
        _ answers: [JSONValue], top: StudyTables.StoredList, lists: NamesInAnyCase<StudyTables.StoredList>,
        listed: ChoiceValues = [:]
    ) -> [JSONValue] {
        answers.map { answer in
            let key = (answer["path"]?.string ?? "").replacingOccurrences(of: "/", with: "_")
            let value = answer["value"] ?? .null
            var result: JSONObject = ["key": .string(key)]
            if let start = answer["startDate"] { result["startTime"] = start }
            if let end = answer["endDate"] { result["endTime"] = end }
            if value == .null { result["skipped"] = .bool(true) }
            if let column = top.columns[key.lowercased()], !column.system {
                let (type, converted) = scalar(value, storage: column.storage)
                result["resultType"] = .string(type)
                result["value"] = converted
            } else if let child = lists[(top.name + key).lowercased()] {
                result["resultType"] = .string("textChoice")
                let chosen = choices(value, typed: answer["answerType"]?.string)
                if let values = listed[key.lowercased()], child.columns["\(key)_other_text".lowercased()] != nil,
                    case .array(let items) = chosen
                {
                    result["value"] = .array(items.map { item in
                        values.contains(ScalarKey(text(item))) ? item : .object(["other": .string(AssessmentImport.otherChoiceValue), "text": item])
                    })
                } else {
                    result["value"] = chosen
                }
            } else {
                result["resultType"] = .string("text")
                result["value"] = value
            }
            return .object(result)
        }
    }

    /// A value for a column of `storage`: as it came when it already fits (the shredder checks
    /// it), read from text when the older answers.json wrote it as text.
    static func scalar(_ value: JSONValue, storage: String) -> (String, JSONValue) {
        switch storage {
        case "DOUBLE":
            if case .string(let text) = value, let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite {
                return ("numeric", .number(number))
            }
            return ("numeric", value)
        case "BOOLEAN":
            if case .string(let text) = value, let flag = Bool(text.lowercased()) { return ("boolean", .bool(flag)) }
            return ("boolean", value)
        case "TIMESTAMP":
            if case .string(let text) = value, let date = ResponseShredder.instant(text) { return ("date", .string(answerDate(date))) }
            return ("date", value)
        default:
            switch value {
            case .null, .string: return ("text", value)
            case .array(let items): return ("text", .string(items.map(text).joined(separator: ",")))
            default: return ("text", .string(text(value)))
            }
        }
    }

    /// A choice question's answer as the values chosen: a list as it came, one value alone, or
    /// the comma-joined text answers.json holds (iOS writes `1,11`; Android each value in quotes).
    /// A text that came typed as one value (`typed`, the result's answer type, is not `array`:
    /// a single choice, or its "other" free text) is one value, commas and all.
    static func choices(_ value: JSONValue, typed: String? = nil) -> JSONValue {
        switch value {
        case .null: return .null
        case .array(let items): return .array(items.map { .string(text($0)) })
        case .string(let single) where typed != nil && typed != "array": return .array([.string(single)])
        case .string(let joined):
            return .array(joined.split(separator: ",", omittingEmptySubsequences: true).map { part in
                var item = part.trimmingCharacters(in: .whitespaces)
                if item.count >= 2, item.hasPrefix("\""), item.hasSuffix("\"") { item = String(item.dropFirst().dropLast()) }
                return .string(item)
            })
        default: return .array([.string(text(value))])
        }
    }

    /// A value as the text a choice or text column holds: numbers as written (`1`, not `1.0`).
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .null: ""
        default: value.text ?? value.serialized(sortedKeys: true)
        }
    }

    /// `yyyy-MM-dd'T'HH:mm:ss.SSS+0000`: the one form a date answer is read in.
    static func answerDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return String(formatter.string(from: date).dropLast()) + "+0000"
    }
}
