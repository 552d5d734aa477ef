import Foundation
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// Reminders of runs that are due and not done: planned when a participant's standings are
/// counted, decided once per run by the reminder sweep, pushed through the push queue, audited.
@Suite(.needsCluster) struct RunReminderTests {
    /// The example study (New York), its lifetime `baseline` reminded of at once, at most once a
    /// day, and its ongoing `anytimeLog` reminded of outside quiet hours that cover the next two
    /// hours of New York's clock now.
    static func study(_ studyId: String, quietFrom: String, quietUntil: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(try ExampleStudy().document(studyId: studyId).utf8)) as? [String: Any])
        var activities = try #require(object["activities"] as? [[String: Any]])
        for index in activities.indices {
            switch activities[index]["activityId"] as? String {
            case "baseline":
                activities[index]["reminder"] = ["afterMinutes": 0, "maxPerDay": 1, "message": ["en": "Your first survey is waiting."]]
            case "anytimeLog":
                activities[index]["reminder"] = ["afterMinutes": 0, "maxPerDay": 3, "quietFrom": quietFrom, "quietUntil": quietUntil]
            default: break
            }
        }
        object["activities"] = activities
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static let newYork = TimeZone(identifier: "America/New_York")!

    /// `HH:mm` of New York's clock `offset` seconds from now.
    static func clock(_ offset: TimeInterval) -> String {
        let seconds = WallClock(Date().addingTimeInterval(offset), in: newYork)!.seconds
        return String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
    }

    @Test func aDueRunIsRemindedOnceOutsideQuietHoursAndNotAfterWithdrawalOrOptingOut() async throws {
        let quietUntil = Self.clock(2 * 3600)
        let document = try Self.study("SLEEPWELL", quietFrom: Self.clock(-3600), quietUntil: quietUntil)
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true, document: { _ in document }) { h, team in
            let ann = try await h.signUp("ann@example.org")
            try await h.device(ann, os: "ios", token: String(repeating: "a1", count: 32))
            let bob = try await h.signUp("bob@example.org")
            try await h.device(bob, os: "android", token: "bob-fcm-token", remote: false)
            let cat = try await h.signUp("cat@example.org")
            try await h.device(cat, os: "ios", token: String(repeating: "c3", count: 32))
            let dan = try await h.signUp("dan@example.org")
            try await h.device(dan, os: "ios", token: String(repeating: "d4", count: 32))
            // Dan had today's one baseline reminder already (another run of it, as it were).
            try await h.sql(
                """
                INSERT INTO run_reminders (user_id, study_id, activity_id, run_id, run_week, local_day, planned_at, outcome, devices, message)
                VALUES (\(UUID(uuidString: dan.userId)!), 'SLEEPWELL', 'baseline', 99, '2020-01-06',
                        (now() AT TIME ZONE 'America/New_York')::date, now(), 'queued', 1, '{}')
                """)
            for user in [ann, bob, cat, dan] { try await h.join("SLEEPWELL", auth: user.auth, userId: user.userId) }
            // Cat withdraws at once.
            try await h.sql("UPDATE participant_studies SET withdrawn_at = now(), status = 'Withdrawn' WHERE user_id = \(UUID(uuidString: cat.userId)!)")

            let decided = try await eventually("the baseline reminders decided", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM run_reminders WHERE activity_id = 'baseline' AND run_id = 1")
            } until: { $0 == 3 }
            #expect(decided == 3, "Ann, Bob and Dan; not Cat, who left")
            let outcomes = try await h.postgres.query(
                """
                SELECT p.email, r.outcome, r.devices FROM run_reminders r JOIN participants p ON p.user_id = r.user_id
                WHERE r.activity_id = 'baseline' AND r.run_id = 1 ORDER BY p.email
                """, logger: .init(label: "test")
            ).collect().map { try $0.decode((String, String, Int).self) }
            try #require(outcomes.count == 3)
            #expect(outcomes[0] == ("ann@example.org", "queued", 1))
            #expect(outcomes[1] == ("bob@example.org", "opted_out", 0))
            #expect(outcomes[2] == ("dan@example.org", "daily_limit", 0))

            // Ann's one push carries the reminder's text and names the activity.
            let message = try await h.postgres.query(
                """
                SELECT r.message::text FROM push_outbox q JOIN run_reminders r ON r.id = q.reminder_id
                JOIN participant_sessions s ON s.id = q.session_id WHERE s.user_id = \(UUID(uuidString: ann.userId)!)
                """, logger: .init(label: "test")
            ).collect().map { try $0.decode(String.self) }
            try #require(message.count == 1)
            let sent = try JSONDecoder().decode(NotificationMessage.self, from: Data(message[0].utf8))
            #expect(sent.activityId == "baseline" && sent.subtype == "Activity" && sent.type == .study && sent.studyId == "SLEEPWELL")
            #expect(sent.message.translations["en"] == "Your first survey is waiting.")
            #expect(try await h.count("SELECT count(*)::int FROM push_outbox WHERE reminder_id IS NOT NULL") == 1)
            #expect(try await h.count("SELECT count(*)::int FROM audit_events WHERE action = 'run.reminded'") == 3)
            // Counted in the study's weeks: Ann's pushed; Bob's and Dan's decided otherwise (Dan's
            // earlier one, put in by hand above, is of a week long gone).
            let weeks = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/weeks", token: team.viewer)
            let baseline = try JSONDecoder().decode(StudyRunWeeks.self, from: weeks.body).activities.first { $0.activityId == "baseline" }
            #expect(baseline?.weeks.map(\.reminded).reduce(0) { $0 + ($1 ?? 0) } == 1)
            #expect(baseline?.weeks.map(\.notReminded).reduce(0) { $0 + ($1 ?? 0) } == 2)

            // The log's reminder waits for the end of the quiet hours, on New York's clock.
            let planned = try await h.postgres.query(
                "SELECT remind_at FROM participant_activity_standings WHERE activity_id = 'anytimeLog' AND remind_at IS NOT NULL",
                logger: .init(label: "test")
            ).collect().map { try $0.decode(Date.self) }
            #expect(planned.count == 3, "Ann, Bob and Dan")
            for at in planned {
                #expect(at > Date().addingTimeInterval(3_000))
                let clock = WallClock(at, in: Self.newYork)!.seconds
                #expect(String(format: "%02d:%02d", clock / 3600, clock / 60 % 60) == quietUntil)
            }
            #expect(try await h.count("SELECT count(*)::int FROM run_reminders WHERE activity_id = 'anytimeLog'") == 0)

            // Reached late (as if planned for a minute ago and the sweep were behind), it is not
            // sent in the quiet hours either: it waits for their end again.
            try await h.sql("UPDATE participant_run_ledgers SET recount_at = 'infinity'")
            try await h.sql(
                "UPDATE participant_activity_standings SET remind_at = now() - interval '1 minute' WHERE activity_id = 'anytimeLog' AND remind_at IS NOT NULL")
            let postponed = try await eventually("the late reminders put off to the end of the quiet hours", within: .seconds(30)) {
                try await h.postgres.query(
                    "SELECT remind_at FROM participant_activity_standings WHERE activity_id = 'anytimeLog' AND remind_at IS NOT NULL",
                    logger: .init(label: "test")
                ).collect().map { try $0.decode(Date.self) }
            } until: { $0.count == 3 && $0.allSatisfy { $0 > Date().addingTimeInterval(3_000) } }
            for at in postponed {
                let clock = WallClock(at, in: Self.newYork)!.seconds
                #expect(String(format: "%02d:%02d", clock / 3600, clock / 60 % 60) == quietUntil)
            }
            #expect(try await h.count("SELECT count(*)::int FROM run_reminders WHERE activity_id = 'anytimeLog'") == 0)

            // Counted again (an app report arrives), a run reminded of once is not planned again.
            try await h.sql("UPDATE participant_run_ledgers SET recount_at = now()")
            try await eventually("every ledger counted again", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM participant_run_ledgers WHERE recount_at <= now()")
            } until: { $0 == 0 }
            #expect(try await h.count(
                "SELECT count(*)::int FROM participant_activity_standings WHERE activity_id = 'baseline' AND remind_at IS NOT NULL") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM push_outbox WHERE reminder_id IS NOT NULL") == 1)
        }
    }
}
