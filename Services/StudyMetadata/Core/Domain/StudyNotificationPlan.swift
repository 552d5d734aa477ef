import Foundation
import StudyModels

/// When a study's own notifications are due, now that it has a new status: the rule that
/// `NotificationStore.syncStudyNotifications` writes, decided here so the store holds none.
package enum StudyNotificationPlan {
    /// A notification of the document and the instant it is due.
    package struct Due: Sendable, Equatable {
        package var notification: StudyNotification
        package var at: Date
    }

    /// The document's notifications to keep pending, each with when it is due, or nil when the
    /// study in `status` sends nothing (not testing, active or paused): then every pending one is
    /// dropped. Immediate ones are due `now`; scheduled ones at their local time in the study's
    /// zone; anchor-relative ones are each participant's (registration schedules them). A time
    /// that has passed by more than `PublishGuard.lateNotificationGrace` (more than the
    /// dispatcher's polls could explain) is not sent at all: sent now, it would reach every
    /// participant at once, about a day gone by.
    package static func due(_ document: StudyDocument, status: StudyStatus, now: Date) -> [Due]? {
        guard [.testing, .active, .paused].contains(status) else { return nil }
        let zone = TimeZone(identifier: document.timeZone) ?? .gmt
        return document.notifications.compactMap { notification in
            let at: Date
            switch notification.timing {
            case .immediate:
                at = now
            case .scheduled:
                guard let local = notification.at, let instant = LocalTimes.instant(localDateTime: local, in: zone) else { return nil }
                at = instant
            case .anchorRelative:
                return nil
            }
            guard at >= now.addingTimeInterval(-PublishGuard.lateNotificationGrace) else { return nil }
            return Due(notification: notification, at: at)
        }
    }
}
