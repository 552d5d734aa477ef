import Foundation

/// The checks of a draft against the clock, in the study's time zone, before it is frozen into a
/// version that participants will see.
public enum PublishGuard {
    /// How long after its time a scheduled notification may still be sent: the notification
    /// dispatcher polls every few seconds, and a launch a minute late should not lose one.
    public static let lateNotificationGrace: TimeInterval = 15 * 60

    /// What keeps `document` from being published at `now`: anything the validator finds, and
    /// activities whose absolute schedule has already ended.
    public static func problems(_ document: StudyDocument, now: Date) -> [ValidationProblem] {
        StudyValidator.validate(document) + pastSchedules(document, now: now)
    }

    /// Activities whose absolute schedule has ended before `now`'s day: nothing of them would be
    /// served. (For a caller that has the validator's review already.)
    public static func pastSchedules(_ document: StudyDocument, now: Date) -> [ValidationProblem] {
        guard let today = localNow(document, now).map({ $0 / 100_000 }) else { return [] }
        var problems: [ValidationProblem] = []
        for (index, activity) in document.activities.enumerated() where activity.schedule.anchor == nil {
            let schedule = activity.schedule
            let lastDay: Int? =
                switch schedule.frequency {
                case .manual: (schedule.runs ?? []).compactMap { LocalTimes.dateTime($0.end).map { $0 / 100_000 } }.max()
                default: schedule.endDate.flatMap(LocalTimes.sortableDate)
                }
            if let lastDay, lastDay < today {
                problems.append(ValidationProblem(
                    pointer: "/activities/\(index)/schedule",
                    message: "\(activity.activityId) is scheduled entirely in the past; move or remove it before publishing"))
            }
        }
        return problems
    }

    /// What publishing at `now` would do that the coordinator may not expect, without keeping it
    /// from publishing: a scheduled notification whose time has passed is never sent (study-metadata
    /// does not queue it, rather than send it late, all at once, at launch).
    public static func warnings(_ document: StudyDocument, now: Date) -> [ValidationProblem] {
        guard let zone = TimeZone(identifier: document.timeZone) else { return [] }
        let latest = now.addingTimeInterval(-lateNotificationGrace)
        return document.notifications.enumerated().compactMap { index, notification in
            guard notification.timing == .scheduled, let at = notification.at, let due = LocalTimes.instant(localDateTime: at, in: zone),
                due < latest
            else { return nil }
            return ValidationProblem(
                pointer: "/notifications/\(index)/at",
                message: "\(at) has passed, so this notification will not be sent; give it a time to come, or remove it")
        }
    }

    /// `now` as a sortable local date-time (`LocalTimes.dateTime`) in the study's time zone.
    static func localNow(_ document: StudyDocument, _ now: Date) -> Int? {
        guard let zone = TimeZone(identifier: document.timeZone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return nil }
        let seconds = (parts.hour ?? 0) * 3600 + (parts.minute ?? 0) * 60 + (parts.second ?? 0)
        return ((year * 100 + month) * 100 + day) * 100_000 + seconds
    }
}
