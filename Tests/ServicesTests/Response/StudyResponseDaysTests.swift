import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The charts page's responses a day (`ResponseAdminStore.daily`) read from the counts kept as
/// responses come and go (`study_response_days`, response migration 34) are what counting every
/// response gives: after single inserts either side of UTC midnight, a bulk insert in one
/// statement, inserts from four connections at once, a participant's responses deleted, and
/// responses re-dated or moved to another activity or study.
@Suite(.needsCluster) struct StudyResponseDaysTests {
    static let logger = Logger(label: "response-days")
    /// 2026-12-06 12:00 UTC: the day the reads are made.
    static let now = Date(timeIntervalSince1970: 1_796_558_400)

    @Test func keptCountsAreEveryResponseCountedAndFollowInsertsDeletesAndUpdates() async throws {
        try await ResponseHarness.run { h in
            #expect(try await h.studyEvent("DAYS") == .ok)
            #expect(try await h.studyEvent("ELSEWHERE") == .ok)
            var participants: [Int64] = []
            for study in ["DAYS", "DAYS", "DAYS", "ELSEWHERE"] {
                for try await id in try await h.postgres.query(
                    "INSERT INTO participants (study_key, status, allow_data_sharing) VALUES (\(study), 'enrolled', 'true') RETURNING id",
                    logger: Self.logger
                ).decode(Int64.self) { participants.append(id) }
            }
            try #require(participants.count == 4)
            let store = ResponseAdminStore(client: h.postgres, audit: AuditLog(client: h.postgres, logger: Self.logger), logger: Self.logger)
            var written = 0
            func insert(_ participant: Int, _ activity: String, at: Date) async throws {
                written += 1
                try await h.sql(
                    """
                    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint, received_at)
                    VALUES (\(participants[participant]), \(participant == 3 ? "ELSEWHERE" : "DAYS"), \(activity), '1.0', '{}', '{}',
                            \("single-\(written)"), \(at))
                    """)
            }
            // Either side of midnight UTC, today, 29 and 30 days ago (the edge of a 30-day chart).
            let midnight = UTCDay.start(of: Self.now)
            let day: TimeInterval = 86_400
            let offsets: [TimeInterval] = [-1, 0, 1, -29 * day - 1, -29 * day, -30 * day + 5, 3_600]
            for offset in offsets {
                try await insert(0, "daily", at: midnight.addingTimeInterval(offset))
                try await insert(3, "daily", at: midnight.addingTimeInterval(offset))
            }
            try await insert(1, "Daily", at: midnight.addingTimeInterval(-400))  // another activity, by case
            try await Self.expectKeptIsCounted(store, h.postgres, "after single inserts")

            // One statement of 600 responses over 70 days: one upsert per day, activity and shard.
            try await h.sql(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint, received_at)
                SELECT (\(Array(participants[0..<3]))::bigint[])[1 + i % 3], 'DAYS', CASE WHEN i % 4 = 0 THEN 'weekly' ELSE 'daily' END, '1.0', '{}', '{}',
                       'bulk-' || i, \(Self.now) - make_interval(secs => (i * 10007) % (70 * 86400))
                FROM generate_series(1, 600) i
                """)
            try await Self.expectKeptIsCounted(store, h.postgres, "after a bulk insert")

            // Four connections inserting at once, each its own transactions.
            let ids = participants
            try await withThrowingTaskGroup(of: Void.self) { group in
                for connection in 0..<4 {
                    group.addTask {
                        for k in 0..<25 {
                            try await h.postgres.query(
                                """
                                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint,
                                                       received_at)
                                VALUES (\(ids[connection % 3]), 'DAYS', 'daily', '1.0', '{}', '{}', \("together-\(connection)-\(k)"),
                                        \(Self.now.addingTimeInterval(-Double(k) * 3_600)))
                                """, logger: Self.logger)
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await Self.expectKeptIsCounted(store, h.postgres, "after inserts at once")

            // A participant's data deleted as the store deletes it.
            try await h.sql("DELETE FROM responses WHERE participant_id = ANY(\([participants[1]]))")
            try await Self.expectKeptIsCounted(store, h.postgres, "after a participant's responses were deleted")

            // A response re-dated, moved to another activity or study: its count moves with it.
            for change in [
                "received_at = received_at - interval '3 days' WHERE fingerprint LIKE 'bulk-1%'",
                "received_at = received_at + interval '1 second' WHERE fingerprint LIKE 'single-%'",
                "activity_id = 'other' WHERE fingerprint LIKE 'together-1-%'",
                "study_key = 'ELSEWHERE' WHERE fingerprint LIKE 'bulk-2%'",
            ] {
                try await h.postgres.query(PostgresQuery(unsafeSQL: "UPDATE responses SET \(change)"), logger: Self.logger)
                try await Self.expectKeptIsCounted(store, h.postgres, "after UPDATE responses SET \(change)")
            }
            // An update of anything else goes on as before.
            try await h.sql("UPDATE responses SET status = 'processed' WHERE study_key = 'DAYS'")
            try await Self.expectKeptIsCounted(store, h.postgres, "after processing")
        }
    }

    /// Each study's chart over 1, 30 and 366 days equals every response counted by UTC day.
    static func expectKeptIsCounted(_ store: ResponseAdminStore, _ postgres: PostgresClient, _ when: String) async throws {
        for study in ["DAYS", "ELSEWHERE"] {
            for days in [1, 30, 366] {
                let from = UTCDay.start(of: UTCDay.start(of: now), offset: -(days - 1))
                var counted: [String: [DailyResponses.Day]] = [:]
                var rows = 0
                for try await (activity, day, count) in try await postgres.query(
                    """
                    SELECT activity_id, to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int
                    FROM responses WHERE study_key = \(study) AND received_at >= \(from)
                    GROUP BY activity_id, day ORDER BY activity_id, day
                    """, logger: logger
                ).decode((String, String, Int).self) {
                    counted[activity, default: []].append(.init(date: day, count: count))
                    rows += 1
                }
                let kept = try await store.daily(studyKey: study, days: days, now: now)
                #expect(kept.from == UTCDay.string(from) && kept.to == UTCDay.string(now))
                #expect(kept.activities.map(\.days.count).reduce(0, +) == rows, "\(study), \(days) days, \(when)")
                #expect(kept.activities == counted.keys.sorted().map { .init(activityId: $0, days: counted[$0] ?? []) }, "\(study), \(days) days, \(when)")
            }
        }
    }
}
