import Foundation
import StudyMetadataCore
import StudyModels
import Testing

/// `StudyNotificationPlan`: which of a study document's notifications are due, and when, for the
/// store to write (the example study: one immediate, one scheduled at 2027-02-15 09:00 New York,
/// one anchor-relative).
@Suite struct StudyNotificationPlanTests {
    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")

    static func example() throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: try Data(contentsOf: exampleURL))
    }

    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func immediateOnesAreDueNowScheduledOnesAtTheirTimeInTheStudysZone() throws {
        let now = Self.utc("2027-01-10T12:00:00Z")
        let planned = try #require(StudyNotificationPlan.due(try Self.example(), status: .active, now: now))
        #expect(planned.map(\.notification.notificationId) == ["welcome", "midpoint"], "anchor-relative ones are each participant's")
        #expect(planned.map(\.at) == [now, Self.utc("2027-02-15T14:00:00Z")])
    }

    @Test func aStudyThatSendsNothingPlansNothingAndATimeLongPastIsDropped() throws {
        let document = try Self.example()
        for status in [StudyStatus.preLaunch, .upcoming, .deactivated] {
            #expect(StudyNotificationPlan.due(document, status: status, now: Self.utc("2027-01-10T12:00:00Z")) == nil, "\(status)")
        }
        // Just within the grace the scheduled one is still sent; past it, it is not.
        let scheduled = Self.utc("2027-02-15T14:00:00Z")
        let within = StudyNotificationPlan.due(document, status: .paused, now: scheduled.addingTimeInterval(PublishGuard.lateNotificationGrace))
        #expect(within?.map(\.notification.notificationId) == ["welcome", "midpoint"])
        let past = StudyNotificationPlan.due(
            document, status: .testing, now: scheduled.addingTimeInterval(PublishGuard.lateNotificationGrace + 1))
        #expect(past?.map(\.notification.notificationId) == ["welcome"])
    }
}
