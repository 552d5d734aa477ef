import Foundation

/// When an activity opens and closes: for a schedule at absolute dates, the same instants for
/// every participant (the study document's dates in the study's zone, what the apps receive as
/// `startTime` and `endTime`); for one relative to an anchor, the participant's anchor date plus
/// the schedule's days, at its times in the participant's zone.
public struct ActivityBounds: Sendable, Equatable {
    /// nil: not known yet (a one-time activity that opens at launch, before the study launched).
    public var start: Date?
    /// nil: open (a one-time activity for the study's lifetime, an ongoing one).
    public var end: Date?

    public init(start: Date?, end: Date?) {
        self.start = start
        self.end = end
    }

    static let lastSecond = 86_399

    /// The bounds of a schedule at absolute dates, in the study's zone.
    public static func absolute(_ schedule: Schedule, zone: TimeZone, launchedAt: Date?) -> ActivityBounds {
        func at(_ date: String?, _ time: String?) -> Date? {
            date.flatMap { LocalTimes.instant(date: $0, time: time, in: zone) }
        }
        switch schedule.frequency {
        case .oneTime:
            let start = schedule.launchWithStudy == true ? launchedAt : at(schedule.startDate, schedule.time)
            // The last second of the end date, whatever the time of day the activity opens at: the
            // study-metadata services the apps were built against (`ActivityMetaDataDao`,
            // `getTimeDetailsByActivityIdForQuestionnaire`, `DEFAULT_MAX_TIME`) end it so.
            return ActivityBounds(start: start, end: schedule.studyLifetime == true ? nil : at(schedule.endDate, "23:59:59"))
        case .daily:
            return ActivityBounds(start: at(schedule.startDate, schedule.dailyTimes?.first), end: at(schedule.endDate, "23:59:59"))
        case .weekly, .monthly:
            let start = at(schedule.startDate, schedule.time)
            if schedule.endDate != nil { return ActivityBounds(start: start, end: at(schedule.endDate, schedule.time)) }
            let first = start.flatMap { WallClock($0, in: zone) }
            return ActivityBounds(start: start, end: first.flatMap { repeatEnd(schedule, from: $0, in: zone) })
        case .manual:
            let runs = (schedule.runs ?? []).compactMap { run in
                LocalTimes.instant(localDateTime: run.start, in: zone).flatMap { start in
                    LocalTimes.instant(localDateTime: run.end, in: zone).map { (start, $0) }
                }
            }
            return ActivityBounds(start: runs.map(\.0).min(), end: runs.map(\.1).max())
        case .ongoing:
            return ActivityBounds(start: launchedAt, end: nil)
        }
    }

    /// The bounds of an anchor-relative schedule for a participant whose anchor date is
    /// `anchorDay` (`GregorianDays` numbering), in their zone.
    public static func relative(_ schedule: Schedule, anchorDay: Int, zone: TimeZone) -> ActivityBounds {
        let first = firstWallClock(schedule, anchorDay: anchorDay)
        let lastDay = { (days: Int) in WallClock(day: anchorDay + bounded(days), seconds: lastSecond).instant(in: zone) }
        switch schedule.frequency {
        case .oneTime:
            return ActivityBounds(start: first.instant(in: zone), end: schedule.endDays.flatMap(lastDay))
        case .daily, .weekly, .monthly:
            // The apps end these by the repeat count; a schedule without one ends on its end day.
            let end = repeatEnd(schedule, from: first, in: zone) ?? schedule.endDays.flatMap(lastDay)
            return ActivityBounds(start: first.instant(in: zone), end: end)
        case .manual:
            let runs = anchorRuns(schedule, anchorDay: anchorDay, zone: zone)
            return ActivityBounds(start: runs.compactMap(\.start).min(), end: runs.compactMap(\.end).max())
        case .ongoing:
            return ActivityBounds(start: first.instant(in: zone), end: nil)
        }
    }

    /// Where an anchor-relative schedule starts: `startDays` after the anchor, at its time (a
    /// daily schedule's first window).
    static func firstWallClock(_ schedule: Schedule, anchorDay: Int) -> WallClock {
        let time = schedule.time ?? schedule.dailyTimes?.first
        return WallClock(day: anchorDay + bounded(schedule.startDays ?? 0), seconds: time.flatMap(LocalTimes.time) ?? 0)
    }

    /// A manually scheduled, anchor-relative activity's runs: from `startDays` at their time
    /// (midnight without one) to the last second of `endDays`, in document order.
    static func anchorRuns(_ schedule: Schedule, anchorDay: Int, zone: TimeZone) -> [ActivityBounds] {
        (schedule.anchorRuns ?? []).map { run in
            ActivityBounds(
                start: WallClock(day: anchorDay + bounded(run.startDays), seconds: run.time.flatMap(LocalTimes.time) ?? 0).instant(in: zone),
                end: WallClock(day: anchorDay + bounded(run.endDays), seconds: lastSecond).instant(in: zone))
        }
    }

    /// The end of a weekly, monthly or daily schedule given by a repeat count: one second before
    /// the run after the last would start. A count past `DocumentBounds.repeatCount` (a document
    /// stored before it was checked) names no end.
    static func repeatEnd(_ schedule: Schedule, from first: WallClock, in zone: TimeZone) -> Date? {
        guard let count = schedule.repeatCount, DocumentBounds.repeatCount.contains(count) else { return nil }
        let next: WallClock
        switch schedule.frequency {
        case .daily: next = WallClock(day: first.day + count, seconds: first.seconds)
        case .weekly: next = WallClock(day: first.day + 7 * count, seconds: first.seconds)
        case .monthly: next = first.addingMonths(count)
        case .oneTime, .manual, .ongoing: return nil
        }
        return next.instant(in: zone)?.addingTimeInterval(-1)
    }

    /// Days from an anchor as the document checks bound them, also for a document stored before
    /// it did.
    static func bounded(_ days: Int) -> Int {
        min(max(days, DocumentBounds.anchorDays.lowerBound), DocumentBounds.anchorDays.upperBound)
    }
}
