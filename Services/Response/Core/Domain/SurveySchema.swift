import Foundation
import JSONText
import StudyModels

/// What a survey design turns into: the lists (tables) its answers are stored in, as the
/// original derived them (docs/response-api.md, Processing into tables). The design's `metadata.activityId`
/// names the top list; a text choice, a form or an active task gets a child list named by its
/// parent's name followed directly by the step key (`NewSurvey` + `GroupedList` →
/// `NewSurveyGroupedList`). Every list also has the system columns `Key`, `ParticipantId` and,
/// for a child, `<Parent>Id`, which are not listed here.
package struct SurveySchema: Equatable, Sendable {
    /// How a question's answer is stored.
    package enum Storage: Equatable, Sendable {
        case double
        case timestamp
        case boolean
        /// Text with a maximum length; nil is unlimited.
        case varchar(Int?)

        /// The storage family, for "does not match expected type" checks.
        package var family: String {
            switch self {
            case .double: "DOUBLE"
            case .timestamp: "TIMESTAMP"
            case .boolean: "BOOLEAN"
            case .varchar: "VARCHAR"
            }
        }
    }

    package struct Column: Equatable, Sendable {
        package var name: String
        package var storage: Storage

        package init(name: String, storage: Storage) {
            self.name = name
            self.storage = storage
        }
    }

    package struct List: Equatable, Sendable {
        package var name: String
        /// The list this one's rows belong to; nil for the top list.
        package var parent: String?
        package var columns: [Column]

        package init(name: String, parent: String?, columns: [Column]) {
            self.name = name
            self.parent = parent
            self.columns = columns
        }
    }

    /// The failure messages, in the original's words.
    package struct DesignError: Error, Equatable, Sendable, CustomStringConvertible {
        package var description: String
        /// The step the problem is in, where it is one step's (the check before publishing
        /// points the team at it).
        package var stepKey: String?

        package init(description: String, stepKey: String? = nil) {
            self.description = description
            self.stepKey = stepKey
        }

        package static let unparsable = DesignError(description: "Unable to parse Survey design json")
        package static let incomplete = DesignError(
            description: "Design document does not contain all the required fields (activityId, steps)")
        /// The original's words, then what is wrong in a team's words: the message is what the
        /// processing page shows beside each response that failed.
        package static func cannotApply(_ problem: String, step: String?) -> DesignError {
            DesignError(description: "Unable to apply changes: \(problem)", stepKey: step)
        }
        package static func duplicate(_ key: String) -> DesignError {
            DesignError(description: "Design schema contains duplicate field keys: \(key)", stepKey: key)
        }
        package static func emptyForm(_ key: String) -> DesignError {
            DesignError(description: "Form contains no steps: Step: \(key)", stepKey: key)
        }
        package static func unknownType(_ key: String) -> DesignError {
            DesignError(description: "Unknown step result type for key: \(key)", stepKey: key)
        }
    }

    /// Unlimited text above this length, as in the original.
    package static let maxVarchar = 4000

    package var activityId: String
    package var version: String
    /// The top list first, then each child list after its parent.
    package var lists: [List]

    /// Reads a design as study-metadata's internal activity endpoint (or the original's WCP
    /// `activity` call) returns it: `{"activity": {"metadata": {"activityId", "version"}, "steps"}}`,
    /// with `"assessment"` beside `"activity"` when the activity was imported from one.
    package static func derive(fromDesign data: Data) throws(DesignError) -> SurveySchema {
        guard let root = try? JSONValue.parse(data, budget: .activityDocument) else { throw .unparsable }
        return try derive(fromDesign: root)
    }

    /// The same, from a design already read.
    package static func derive(fromDesign root: JSONValue) throws(DesignError) -> SurveySchema {
        guard case .object(let activity)? = root["activity"], case .object(let metadata)? = activity["metadata"],
            let activityId = metadata["activityId"]?.text, !activityId.isEmpty, case .array(let steps)? = activity["steps"]
        else { throw .incomplete }
        var lists: [List] = []
        // An activity imported from a Sage assessment: its answers come by the assessment's
        // paths, in Sage's archives as well as from the MyStudies apps (docs/sage.md).
        if case .object? = root["assessment"], let assessment = root["assessment"] {
            lists = try SageAnswers.lists(activityId: activityId, assessment: assessment)
        } else {
            try add(steps, as: activityId, parent: nil, to: &lists)
        }
        return SurveySchema(activityId: activityId, version: metadata["version"]?.text ?? "", lists: lists)
    }

    private static func add(_ steps: [JSONValue], as name: String, parent: String?, to lists: inout [List]) throws(DesignError) {
        let index = lists.count
        lists.append(List(name: name, parent: parent, columns: []))
        // In any case, as the tables match names; otherwise by scalars (`NamesInAnyCase`).
        var seen: Set<ScalarKey> = []
        for step in steps {
            guard case .object(let fields) = step else { throw .cannotApply("a step is not an object", step: nil) }
            let key = fields["key"]?.text ?? ""
            guard let type = fields["type"]?.text else { throw .cannotApply("step '\(key)' has no type", step: key) }
            if type.lowercased() == "instruction" { continue }
            guard seen.insert(ScalarKey(key.lowercased())).inserted else { throw .duplicate(key) }
            let format = fields["format"]
            if case .string(let style)? = format?["selectionStyle"], style != "Single", style != "Multiple" {
                throw .unparsable
            }
            let resultType = fields["resultType"]?.text?.lowercased() ?? ""
            switch resultType {
            case "scale", "continuousscale", "timeinterval", "height":
                lists[index].columns.append(Column(name: key, storage: .double))
            case "numeric", "date":
                lists[index].columns.append(Column(name: key, storage: try styledStorage(format, key: key, resultType: resultType)))
            case "boolean":
                lists[index].columns.append(Column(name: key, storage: .boolean))
            case "text", "email", "location", "timeofday", "textscale", "valuepicker", "imagechoice":
                lists[index].columns.append(Column(name: key, storage: .varchar(varcharLength(format?["maxLength"]))))
            case "textchoice":
                var columns = [Column(name: key, storage: .varchar(nil))]
                if allowsOtherText(format) { columns.append(Column(name: "\(key)_Other_Text", storage: .varchar(maxVarchar))) }
                lists.append(List(name: name + key, parent: name, columns: columns))
            case "grouped":
                guard case .array(let inner)? = fields["steps"] else { throw .emptyForm(key) }
                try add(inner, as: name + key, parent: name, to: &lists)
            case "fetalkickcounter":
                lists.append(List(name: name + key, parent: name, columns: [
                    Column(name: "duration", storage: .double), Column(name: "count", storage: .double),
                ]))
            case "spatialspanmemory":
                lists.append(List(name: name + key, parent: name, columns: [
                    Column(name: "score", storage: .double), Column(name: "numberOfGames", storage: .double),
                    Column(name: "numberOfFailures", storage: .double),
                ]))
            case "towerofhanoi":
                lists.append(List(name: name + key, parent: name, columns: [
                    Column(name: "puzzleWasSolved", storage: .boolean), Column(name: "numberOfMoves", storage: .double),
                ]))
            default:
                throw .unknownType(key)
            }
        }
    }

    /// `numeric` and `date` share one rule on `format.style`: Integer or Decimal store a double
    /// (even Integer, as the original did), Date or Date-Time a timestamp; no style is an error.
    private static func styledStorage(_ format: JSONValue?, key: String, resultType: String) throws(DesignError) -> Storage {
        switch format?["style"]?.text {
        case "Integer"?, "Decimal"?: return .double
        case "Date"?, "Date-Time"?: return .timestamp
        default:
            throw .cannotApply(
                resultType == "date"
                    ? "the date question '\(key)' has no kind (Date, or Date and time)"
                    : "the number question '\(key)' has no style (Integer or Decimal)", step: key)
        }
    }

    private static func varcharLength(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, number.double > 0, number.double <= Double(maxVarchar) else { return nil }
        return Int(number.double)
    }

    private static func allowsOtherText(_ format: JSONValue?) -> Bool {
        guard case .array(let choices)? = format?["textChoices"] else { return false }
        return choices.contains { $0["other"]?["textfieldReq"] == .bool(true) }
    }
}
