import Foundation
import InMemoryPorts
import StudyMetadataCore
import StudyModels
import Testing

/// A super-admin's announcements (`Announcements`) and a study admin's messages
/// (`StudyMessages`) against in-memory apps, studies and notifications: each problem named at its
/// field with nothing queued, an id used once, and what is queued audited.
@Suite struct NotificationUseCaseRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func apps() async throws -> InMemoryApps {
        let apps = InMemoryApps()
        _ = try await apps.create(AppDefinition(appId: "SLEEPAPP", orgId: "ORG", name: "Sleep", kind: .gateway), by: "root")
        return apps
    }

    static func summary(_ studyId: String, status: StudyStatus) -> StudySummary {
        StudySummary(
            studyId: studyId, appId: "SLEEPAPP", name: studyId, status: status, draftUpdatedAt: now, draftUpdatedBy: "ana@example.org",
            draftRevision: 1)
    }

    static func problems(_ body: () async throws -> Void) async -> [String]? {
        do {
            try await body()
            return nil
        } catch StudyMetadataError.invalid(let problems, _) {
            return problems.map(\.pointer)
        } catch {
            return ["unexpected \(error)"]
        }
    }

    @Test func anAnnouncementIsQueuedOnceAtItsTimeOrNowWhenThatHasPassed() async throws {
        let queue = InMemoryNotifications()
        let announcements = Announcements(notifications: queue, apps: try await Self.apps())
        let later = AppAnnouncement(notificationId: "welcome", title: nil, text: "Welcome", at: "2027-01-15T09:00:00+01:00")
        let record = try await announcements.announce(later, appId: "SLEEPAPP", by: "root@example.org", now: Self.now)
        #expect(record.dueAt == ISO8601DateFormatter().date(from: "2027-01-15T08:00:00Z"))
        let past = AppAnnouncement(notificationId: "hello", title: nil, text: "Hello", at: "2020-01-01T00:00:00Z")
        #expect(try await announcements.announce(past, appId: "SLEEPAPP", by: "root@example.org", now: Self.now).dueAt == Self.now)
        await #expect(throws: StudyMetadataError.notificationExists(appId: "SLEEPAPP", notificationId: "welcome")) {
            try await announcements.announce(later, appId: "SLEEPAPP", by: "root@example.org", now: Self.now)
        }
        await #expect(throws: StudyMetadataError.noApp("NOAPP")) {
            try await announcements.announce(past, appId: "NOAPP", by: "root@example.org", now: Self.now)
        }
        #expect(queue.queued.map(\.notificationId) == ["welcome", "hello"])
        #expect(queue.audit.actions == ["notification.announced", "notification.announced"])
    }

    @Test func aBadAnnouncementNamesEachProblemAndQueuesNothing() async throws {
        let queue = InMemoryNotifications()
        let announcements = Announcements(notifications: queue, apps: try await Self.apps())
        let bad = AppAnnouncement(notificationId: "no spaces allowed", title: nil, text: LocalizedText(translations: ["es": "Hola"]), at: "tomorrow")
        let problems = await Self.problems { _ = try await announcements.announce(bad, appId: "SLEEPAPP", by: "root", now: Self.now) }
        #expect(problems == ["/notificationId", "/text", "/at"])
        #expect(queue.queued.isEmpty)
    }

    @Test func aMessageGoesOnlyToAnActiveOrTestingStudyAndItsIdIsUsedOnce() async throws {
        let queue = InMemoryNotifications()
        let studies = InMemoryStudySummaries([
            Self.summary("SLEEP", status: .active), Self.summary("DRAFTY", status: .preLaunch), Self.summary("TRIAL", status: .testing),
        ])
        let messages = StudyMessages(studies: studies, notifications: queue)
        let message = StudyMessage(notificationId: "m1", title: nil, text: "Please sync your app")
        #expect(try await messages.send(message, studyId: "SLEEP", by: "ana@example.org").studyId == "SLEEP")
        #expect(try await messages.send(message, studyId: "TRIAL", by: "ana@example.org").studyId == "TRIAL")
        await #expect(throws: StudyMetadataError.studyNotificationExists(studyId: "SLEEP", notificationId: "m1")) {
            try await messages.send(message, studyId: "SLEEP", by: "ana@example.org")
        }
        await #expect(throws: StudyMetadataError.notActive(studyId: "DRAFTY", status: .preLaunch)) {
            try await messages.send(message, studyId: "DRAFTY", by: "ana@example.org")
        }
        await #expect(throws: StudyMetadataError.noStudy("NONE")) { try await messages.send(message, studyId: "NONE", by: "ana") }
        #expect(try await messages.list(studyId: "SLEEP").map(\.notificationId) == ["m1"])
        #expect(queue.audit.recorded.map(\.studyId) == ["SLEEP", "TRIAL"])
    }

    @Test func aMessageLongerThanAPushCanCarryIsRefusedAtItsLanguage() async throws {
        let queue = InMemoryNotifications()
        let messages = StudyMessages(studies: InMemoryStudySummaries([Self.summary("SLEEP", status: .active)]), notifications: queue)
        let long = StudyMessage(
            notificationId: nil, title: LocalizedText(translations: ["en": String(repeating: "t", count: StudyMessages.maximumTitle + 1)]),
            text: LocalizedText(translations: [
                "en": "fine", "es": String(repeating: "é", count: StudyMessages.maximumText + 1),
            ]))
        let problems = await Self.problems { _ = try await messages.send(long, studyId: "SLEEP", by: "ana@example.org") }
        #expect(problems == ["/text/es", "/title/en"])
        #expect(queue.queued.isEmpty)
    }
}
