import Foundation

/// One run of an activity for one participant: the span in which the app offers it, and the
/// number the app gives it (what it sends back as `activityRunId`).
public struct ActivityRun: Sendable, Equatable {
    public var activityId: String
    /// 1, 2, ... in the order the app generates the participant's runs.
    public var runId: Int
    public var start: Date
    /// nil: open for as long as the study runs (a one-time activity for the study's lifetime, an
    /// ongoing one).
    public var end: Date?

    public init(activityId: String, runId: Int, start: Date, end: Date?) {
        self.activityId = activityId
        self.runId = runId
        self.start = start
        self.end = end
    }
}

/// What the engine needs to know of a participant to expand a schedule for them.
public struct ParticipantClock: Sendable {
    /// The zone their phone keeps (docs/schedules.md, The participant's zone).
    public var zone: TimeZone
    /// When they enrolled: the apps' joining date.
    public var joinedAt: Date
    /// The app they run: the two MyStudies apps number a few runs differently (weekly and
    /// monthly schedules joined late), and each participant's ids are the ones their app sends.
    public var platform: Platform

    public init(zone: TimeZone, joinedAt: Date, platform: Platform) {
        self.zone = zone
        self.joinedAt = joinedAt
        self.platform = platform
    }

    /// Their enrolment date in their zone: the anchor of `enrollmentDate` schedules.
    public var enrolmentDay: Int? { WallClock(joinedAt, in: zone)?.day }
}
