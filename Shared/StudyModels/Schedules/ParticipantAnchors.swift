import Foundation

/// The dates a participant's anchored schedules count from, other than their enrolment: the
/// answers to date questions that arrived from them, and the date properties the research team
/// gave them (docs/schedules.md, Anchors). Days are `GregorianDays` numbers, the dates as written
/// (an answer's local date, not its instant in UTC: the apps anchor on the day the participant saw).
public struct ParticipantAnchors: Sendable, Equatable {
    /// The newest answer per activity and question key, both lowercased (the response service
    /// matches keys without case).
    public var answers: [String: [String: Int]]
    /// Date properties by key, lowercased.
    public var properties: [String: Int]

    public init(answers: [String: [String: Int]] = [:], properties: [String: Int] = [:]) {
        self.answers = answers
        self.properties = properties
    }

    /// Whether any activity of `schedule` counts from an answer or a property: only then are a
    /// participant's anchor dates worth reading.
    public static func needed(by schedule: StudySchedule?) -> Bool {
        (schedule?.activities ?? []).contains { [.activityResponse, .participantProperty].contains($0.schedule.anchor?.source) }
    }

    /// The anchor's day for this participant; nil for an enrolment anchor (the engine takes the
    /// day they joined) and for an answer or property they do not have (no runs yet, as in the apps).
    public func day(for anchor: Anchor?) -> Int? {
        switch anchor?.source {
        case .activityResponse?:
            guard let activity = anchor?.activityId, let key = anchor?.key else { return nil }
            return answers[activity.lowercased()]?[key.lowercased()]
        case .participantProperty?:
            return anchor?.propertyKey.flatMap { properties[$0.lowercased()] }
        case .enrollmentDate?, nil:
            return nil
        }
    }

    /// A kept anchor date as the services send it: a key of 1 to `SubmissionFeed.Submission.maxKeyLength`
    /// scalars and a `yyyy-MM-dd` an anchor can take.
    public static func isKeptDate(key: String, value: String) -> Bool {
        (1...SubmissionFeed.Submission.maxKeyLength).contains(key.unicodeScalars.count) && value.unicodeScalars.count == 10
            && day(value) != nil
    }

    /// The day of a date as an answer or a property writes it: `yyyy-MM-dd`, alone or followed by
    /// a time (`T...`); nil for anything else.
    public static func day(_ text: String) -> Int? {
        let scalars = Array(text.unicodeScalars.prefix(11))
        guard scalars.count == 10 || (scalars.count == 11 && scalars[10] == "T"),
            let (year, month, day) = LocalTimes.date(String(String.UnicodeScalarView(scalars[0..<10])))
        else { return nil }
        let days = GregorianDays.days(year: year, month: month, day: day)
        return ScheduleEngine.anchorDays.contains(days) ? days : nil
    }
}
