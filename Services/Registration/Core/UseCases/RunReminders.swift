import Foundation
import Logging
import ServiceKit
import StudyModels

/// Sends the reminders due (docs/schedules.md, Reminders): each run the count planned a reminder
/// for, still due and not done, is decided once: pushed through the push queue to the
/// participant's devices, or not (notifications off, no device, the day's limit reached),
/// recorded and audited either way. The sweep reads only the reminders due, by an index.
package struct RunReminders: Sendable {
    package let store: any DueReminders
    package let studies: any StudySchedules
    package let logger: Logger

    package init(store: any DueReminders, studies: any StudySchedules, logger: Logger) {
        self.store = store
        self.studies = studies
        self.logger = logger
    }

    /// Reminders decided per round.
    package static let batch = 100
    /// How long a claimed reminder is kept from the other replicas while it is decided.
    package static let lease: Duration = .seconds(120)
    /// The push's text when the study sets none.
    package static let defaultMessage: LocalizedText = "It is time for this activity."

    /// Reminders decided at once within a round (`concurrentForEach`): each decision is a
    /// transaction of its own, mostly waiting on the database.
    package static let decisionsAtOnce = 6

    /// One round: decides up to `batch` due reminders, `decisionsAtOnce` at a time; how many it took.
    package func round(now: @escaping @Sendable () -> Date = Date.init) async throws -> Int {
        let due = try await store.claim(limit: Self.batch, lease: Self.lease)
        let decisions = try await RoundSchedules.scheduled(due, studyId: \.studyId, studies: studies, logger: logger)
        try await concurrentForEach(decisions, atMost: Self.decisionsAtOnce) { item, schedule in
            try await decide(item, schedule: schedule, now: now())
        }
        return due.count
    }

    /// Decides one reminder against its study's schedule (nil: none published).
    func decide(_ item: RunReminderStore.Due, schedule: StudySchedule?, now at: Date) async throws {
        guard let activity = schedule?.activities.first(where: { $0.activityId == item.activityId }), let reminder = activity.reminder
        else {
            // The study no longer reminds of it: nothing is sent, and the next count agrees.
            try await store.release(item)
            return
        }
        let zone = item.timeZone.flatMap(TimeZone.init(identifier:)) ?? schedule.flatMap { TimeZone(identifier: $0.timeZone) } ?? .gmt
        // Sent late (the sweep was down, or the count came after the time planned), a
        // reminder still never arrives in quiet hours: it waits for their end.
        switch ReminderPlan.quietEnd(at, reminder: reminder, zone: zone) {
        case .some(.some(let end)):
            try await store.postpone(item, until: end)
            return
        case .some(nil):
            try await store.release(item)
            return
        case nil: break
        }
        guard let today = WallClock(at, in: zone)?.day, let runDay = WallClock(item.runStart, in: zone)?.day else { return }
        let outcome = try await store.decide(
            item, maxPerDay: reminder.maxPerDay, localDay: GregorianDays.dateText(today),
            runWeek: GregorianDays.dateText(RunTally.monday(of: runDay))
        ) { id, appId, orgId in
            NotificationMessage(
                id: id, notificationId: "reminder-\(id)", appId: appId, orgId: orgId, studyId: item.studyId, type: .study,
                subtype: "Activity", title: activity.title, message: reminder.message ?? Self.defaultMessage,
                activityId: item.activityId, resourceId: nil, sentAt: at)
        }
        if let outcome {
            logger.debug("a run's reminder was decided", metadata: ["activity": "\(item.activityId)", "outcome": "\(outcome.rawValue)"])
        }
    }
}
