import Foundation
import ServiceKit
import StudyModels

/// A super-admin's message to every user of an app, now or at a time to come. Its id may be
/// chosen, so a script can be re-run safely: a repeated id is refused.
package struct Announcements: Sendable {
    package let notifications: any NotificationOutbox
    package let apps: any AppLookup

    package init(notifications: any NotificationOutbox, apps: any AppLookup) {
        self.notifications = notifications
        self.apps = apps
    }

    /// Queues `announcement` for the app's users; a time in the past means now.
    package func announce(_ announcement: AppAnnouncement, appId: String, by actor: String, now: Date = Date()) async throws
        -> NotificationStore.Record
    {
        var problems: [ValidationProblem] = []
        let notificationId = announcement.notificationId ?? "announcement-\(UUID().uuidString.prefix(8).lowercased())"
        if !Identifiers.isValid(notificationId) {
            problems.append(.init(pointer: "/notificationId", message: Identifiers.rule))
        }
        if (announcement.text.translations[LocalizedText.defaultLanguage] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            problems.append(.init(pointer: "/text", message: "needs an English (\"en\") text"))
        }
        var due = now
        if let at = announcement.at {
            if let instant = Self.instant(at) { due = max(instant, now) } else {
                problems.append(.init(pointer: "/at", message: "must be an ISO 8601 date-time with an offset, like 2026-12-01T09:00:00Z"))
            }
        }
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .announcement) }
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        guard let record = try await notifications.announce(
            appId: appId, notificationId: notificationId, title: announcement.title, message: announcement.text, at: due,
            by: actor)
        else { throw StudyMetadataError.notificationExists(appId: appId, notificationId: notificationId) }
        return record
    }

    /// An ISO 8601 instant with an offset, with or without fractional seconds.
    package static func instant(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
