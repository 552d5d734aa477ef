import Foundation
import StudyModels
import Testing

/// `ReminderPlan`: when a due run is reminded of, in the participant's zone.
@Suite struct ReminderPlanTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    static func local(_ text: String) -> Date {
        LocalTimes.instant(localDateTime: text, in: melbourne)!
    }

    static func run(_ start: String, _ end: String?, id: Int = 1) -> ActivityRun {
        ActivityRun(activityId: "daily", runId: id, start: local(start), end: end.map(local))
    }

    @Test func afterTheDelayUnlessQuietHoursHoldItUntilTheyEnd() {
        let plain = ActivityReminder(afterMinutes: 90)
        #expect(ReminderPlan.time(for: Self.run("2026-03-20T08:00", "2026-03-20T19:59"), reminder: plain, zone: Self.melbourne, participant: "p")
            == Self.local("2026-03-20T09:30"))
        // Quiet from 21:00 until 07:00: a reminder due at 21:30 waits until 07:00 the next day,
        // if the run is still open then; one due at 06:00 waits until 07:00 the same day.
        let quiet = ActivityReminder(afterMinutes: 90, quietFrom: "21:00", quietUntil: "07:00")
        #expect(ReminderPlan.time(for: Self.run("2026-03-20T20:00", "2026-03-21T12:00"), reminder: quiet, zone: Self.melbourne, participant: "p")
            == Self.local("2026-03-21T07:00"))
        #expect(ReminderPlan.time(for: Self.run("2026-03-20T20:00", "2026-03-20T23:59"), reminder: quiet, zone: Self.melbourne, participant: "p")
            == nil, "the run closes before the quiet hours end")
        #expect(ReminderPlan.time(for: Self.run("2026-03-21T04:30", nil), reminder: quiet, zone: Self.melbourne, participant: "p")
            == Self.local("2026-03-21T07:00"))
        // Quiet hours within a day (12:00 to 14:00).
        let lunch = ActivityReminder(afterMinutes: 0, quietFrom: "12:00", quietUntil: "14:00")
        #expect(ReminderPlan.time(for: Self.run("2026-03-21T12:30", nil), reminder: lunch, zone: Self.melbourne, participant: "p")
            == Self.local("2026-03-21T14:00"))
        #expect(ReminderPlan.time(for: Self.run("2026-03-21T14:00", nil), reminder: lunch, zone: Self.melbourne, participant: "p")
            == Self.local("2026-03-21T14:00"))
        // The night summer time ends (5 April 2026, 03:00 back to 02:00), quiet until 07:00 local:
        // 07:00 at +10:00.
        #expect(ReminderPlan.time(for: Self.run("2026-04-04T23:00", nil), reminder: quiet, zone: Self.melbourne, participant: "p")
            == ISO8601DateFormatter().date(from: "2026-04-04T21:00:00Z"))
    }

    @Test func theSpreadIsTheSameDrawEachTimeWithinItsBounds() {
        let spread = ActivityReminder(afterMinutes: 10, randomMinutes: 30)
        var seen: Set<Int> = []
        for id in 1...200 {
            let run = Self.run("2026-03-20T08:00", nil, id: id)
            let at = ReminderPlan.time(for: run, reminder: spread, zone: Self.melbourne, participant: "participant-1")!
            let minutes = Int(at.timeIntervalSince(run.start) / 60)
            #expect((10...40).contains(minutes))
            #expect(at == ReminderPlan.time(for: run, reminder: spread, zone: Self.melbourne, participant: "participant-1"))
            seen.insert(minutes)
        }
        #expect(seen.count > 20, "spread over the half hour")
        // A stored document past the bounds is clamped, never trapped on.
        let wild = ActivityReminder(afterMinutes: Int.max, randomMinutes: Int.max)
        #expect(ReminderPlan.time(for: Self.run("2026-03-20T08:00", nil), reminder: wild, zone: Self.melbourne, participant: "p") != nil)
        #expect(ReminderPlan.draw(participant: "p", run: Self.run("2026-03-20T08:00", nil), upTo: Int.min) == 0)
    }
}
