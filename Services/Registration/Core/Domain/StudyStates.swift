import Foundation
import StudyModels

/// The rules of study and activity state updates, separate from how they are stored.
package enum StudyStates {
    package static let studyStatuses: Set<String> = ["yetToJoin", "inProgress", "completed", "notEligible", "Withdrawn"]
    package static let activityStates: Set<String> = ["yetToJoin", "inProgress", "completed", "abandoned"]

    /// One item of `updateStudyState`: a participation, a bookmark or progress (or several at once).
    package struct StudyUpdate: Sendable, Equatable {
        package var studyId: String
        package var status: String?
        package var participantId: String?
        package var bookmarked: Bool?
        package var completion: Int?
        package var adherence: Int?
    }

    /// One item of `updateActivityState`.
    package struct ActivityUpdate: Sendable, Equatable {
        package var studyId: String
        package var activityId: String
        package var activityVersion: String?
        package var activityState: String?
        package var activityRunId: String?
        package var bookmarked: Bool?
        package var run: ActivityStateReply.Run?
        package var activityStartDate: String?
        package var activityEndDate: String?
        package var anchorDateVersion: String?
        package var anchorDatecreatedDate: String?
        package var customScheduleRuns: [ActivityStateReply.CustomRun]?
    }

    /// Whether an update should replace what is stored for the same activity. The apps replay
    /// updates they made offline, possibly after newer ones: an update for an earlier run, or one
    /// that would move the same run back (completed → inProgress), is stale and ignored. An update
    /// without a numeric run id, or over a stored one without, is always fresh.
    ///
    /// `StudyStateStore` applies this rule inside its upsert (one statement, no read first), from
    /// `runNumber` and `rank` of the update; this function is the rule as the tests state it.
    package static func isFresher(runId incomingRun: String?, state incomingState: String?, than stored: (runId: String, state: String)) -> Bool {
        guard let newRun = runNumber(incomingRun), let oldRun = runNumber(stored.runId) else { return true }
        if newRun != oldRun { return newRun > oldRun }
        guard let incomingState else { return true }
        return rank(incomingState) >= rank(stored.state)
    }

    /// An `activityRunId` as a run number ("3" → 3); nil when it is not one.
    package static func runNumber(_ runId: String?) -> Int64? {
        guard let runId, (1...18).contains(runId.count), runId.allSatisfy(\.isASCII), runId.allSatisfy(\.isNumber) else {
            return nil
        }
        return Int64(runId)
    }

    /// How far along a run is: yetToJoin, then inProgress, then completed or abandoned.
    package static func rank(_ state: String) -> Int {
        switch state {
        case "yetToJoin": 0
        case "inProgress": 1
        default: 2
        }
    }

    /// What one participant's call may carry (not in the original): the apps send one study or a
    /// day's activities at a time; without bounds, an account could store megabytes of "state".
    package static let maxItems = 500
    package static let maxTextLength = 100
    package static let maxCustomRuns = 1_000

    package static func parseStudies(_ items: [JSONValue]) throws -> [StudyUpdate] {
        guard items.count <= maxItems else { throw RegistrationError.invalid("At most \(maxItems) items per call.") }
        return try items.map { item in
            guard case .object(let fields) = item, let studyId = fields["studyId"]?.text, !studyId.isEmpty, studyId.count <= 100
            else { throw RegistrationError.invalid("Invalid input.") }
            var update = StudyUpdate(studyId: studyId)
            if let status = fields["status"]?.text {
                guard studyStatuses.contains(status) else { throw RegistrationError.invalid("Invalid study status \(status).") }
                update.status = status
            }
            update.participantId = try bounded(fields["participantId"]?.text).flatMap { $0.isEmpty ? nil : $0 }
            update.bookmarked = boolean(fields["bookmarked"])
            update.completion = try percent(fields["completion"])
            update.adherence = try percent(fields["adherence"])
            return update
        }
    }

    package static func parseActivities(_ items: [JSONValue], studyId: String?) throws -> [ActivityUpdate] {
        guard items.count <= maxItems else { throw RegistrationError.invalid("At most \(maxItems) items per call.") }
        return try items.map { item in
            guard case .object(let fields) = item,
                let study = fields["studyId"]?.text ?? studyId, !study.isEmpty, study.count <= 100,
                let activityId = fields["activityId"]?.text, !activityId.isEmpty, activityId.count <= 100
            else { throw RegistrationError.invalid("Invalid input.") }
            var update = ActivityUpdate(studyId: study, activityId: activityId)
            update.activityVersion = try bounded(fields["activityVersion"]?.text)
            if let state = fields["activityState"]?.text {
                guard activityStates.contains(state) else { throw RegistrationError.invalid("Invalid activity state \(state).") }
                update.activityState = state
            }
            update.activityRunId = try bounded(fields["activityRunId"]?.text)
            update.bookmarked = boolean(fields["bookmarked"])
            if case .object(let run)? = fields["activityRun"] {
                update.run = .init(
                    total: try count(run["total"]), completed: try count(run["completed"]), missed: try count(run["missed"]))
            }
            update.activityStartDate = try bounded(fields["activityStartDate"]?.text)
            update.activityEndDate = try bounded(fields["activityEndDate"]?.text)
            update.anchorDateVersion = try bounded(fields["anchorDateVersion"]?.text)
            update.anchorDatecreatedDate = try bounded(fields["anchorDatecreatedDate"]?.text)
            if case .array(let runs)? = fields["customScheduleRuns"] {
                guard runs.count <= maxCustomRuns else { throw RegistrationError.invalid("Invalid input.") }
                update.customScheduleRuns = try runs.map { run in
                    guard case .object(let window) = run, let start = try bounded(window["runStartDate"]?.text),
                        let end = try bounded(window["runEndDate"]?.text)
                    else { throw RegistrationError.invalid("Invalid input.") }
                    return .init(runStartDate: start, runEndDate: end)
                }
            }
            return update
        }
    }

    /// A text field of at most `maxTextLength` characters (ids, versions, dates).
    private static func bounded(_ text: String?) throws -> String? {
        guard let text else { return nil }
        guard text.count <= maxTextLength else { throw RegistrationError.invalid("Invalid input.") }
        return text
    }

    private static func boolean(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag): flag
        case .number(let number): number.double != 0
        case .string(let text): text == "true" || text == "1" ? true : (text == "false" || text == "0" ? false : nil)
        default: nil
        }
    }

    private static func percent(_ value: JSONValue?) throws -> Int? {
        guard let value, value != .null else { return nil }
        guard let text = value.text, let number = Double(text), (0...100).contains(number) else {
            throw RegistrationError.invalid("Completion and adherence are percentages from 0 to 100.")
        }
        return Int(number.rounded())
    }

    private static func count(_ value: JSONValue?) throws -> Int {
        guard let value else { return 0 }
        guard let text = value.text, let number = Int(text), number >= 0 else { throw RegistrationError.invalid("Invalid input.") }
        return number
    }
}
