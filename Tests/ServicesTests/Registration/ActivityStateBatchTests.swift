import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `updateActivityState` calls in flight together are applied in one statement
/// (`MergeActivityStatesStatement`): each must come out exactly as if it had been applied alone
/// by the single upsert, stale replays included; an activity updated twice in one batch is
/// updated in two rounds.
@Suite(.needsCluster) struct ActivityStateBatchTests {
    typealias Update = StudyStates.ActivityUpdate
    let logger = Logger(label: "test")

    func participant(_ postgres: PostgresClient) async throws -> UUID {
        let userId = UUID()
        let email = "\(userId)@participants.test"
        try await postgres.query(
            """
            INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
            VALUES (\(userId), 'DEMOAPP', 'DEMOORG', \(email), \(email), 'x', true)
            """, logger: logger)
        return userId
    }

    /// An update as the apps send it (parsed as `updateActivityState` parses it).
    func update(_ activity: String, run: String?, state: String?, total: Int? = nil, version: String? = nil) -> Update {
        var item: JSONObject = ["activityId": .string(activity)]
        if let run { item["activityRunId"] = .string(run) }
        if let state { item["activityState"] = .string(state) }
        if let version { item["activityVersion"] = .string(version) }
        if let total { item["activityRun"] = .object(["total": .number(Double(total)), "completed": .number(0), "missed": .number(0)]) }
        return try! StudyStates.parseActivities([.object(item)], studyId: "S")[0]
    }

    /// Every stored activity row of `userId`, as text to compare.
    func rows(_ postgres: PostgresClient, _ userId: UUID) async throws -> [String] {
        var found: [String] = []
        for try await row in try await postgres.query(
            """
            SELECT activity_id || '|' || activity_version || '|' || activity_state || '|' || activity_run_id || '|' || runs_total
                   || '|' || custom_schedule_runs::text
            FROM participant_activities WHERE user_id = \(userId) ORDER BY activity_id
            """, logger: logger
        ).decode(String.self) { found.append(row) }
        return found
    }

    /// A starting row, then updates: fresher, stale, a step back in the same run, one with no run
    /// id, values left out, a new activity.
    static let sequence: [(String, String?, String?, Int?, String?)] = [
        ("a", "5", "completed", 3, "1.0"), ("a", "4", "inProgress", 9, nil), ("a", "5", "inProgress", 8, nil),
        ("a", "6", "inProgress", nil, nil), ("b", nil, "inProgress", 2, "2.0"), ("b", "x", nil, nil, "2.1"),
        ("c", "123456789012345678", "inProgress", 1, nil), ("c", "123456789012345677", "completed", 7, nil),
    ]

    @Test func aBatchLeavesEveryRowAsTheSingleUpsertsDo() async throws {
        try await RegistrationHarness.run { h in
            let alone = try await participant(h.postgres)
            let batched = try await participant(h.postgres)
            let now = Date(timeIntervalSince1970: 1_900_000_000)
            // The starting rows, written alone for both.
            for userId in [alone, batched] {
                for try await _ in try await h.postgres.run(
                    UpsertActivityStatement(update: update("a", run: "5", state: "completed", total: 3, version: "1.0"), userId: userId, now: now),
                    pooling: .session, logger: logger) {}
            }
            // The rest: alone one by one for one participant, in one batch for the other (each
            // activity once per batch: MERGE changes a row at most once).
            let rest = Self.sequence.dropFirst()
            for (activity, run, state, total, version) in rest {
                for try await _ in try await h.postgres.run(
                    UpsertActivityStatement(update: update(activity, run: run, state: state, total: total, version: version), userId: alone, now: now),
                    pooling: .session, logger: logger) {}
            }
            let items = try rest.map { activity, run, state, total, version in
                try UpsertActivityStatement(update: update(activity, run: run, state: state, total: total, version: version), userId: batched, now: now)
            }
            // Rounds are applied in order, so each activity's updates keep theirs.
            let rounds = MergeActivityStatesStatement.rounds(of: items)
            #expect(rounds.map { $0.map(\.update.activityId) } == [["a", "b", "c"], ["a", "b", "c"], ["a"]])
            #expect(rounds.map { $0.compactMap(\.update.activityRunId) } == [["4", "123456789012345678"], ["5", "x", "123456789012345677"], ["6"]])
            for round in rounds {
                for try await _ in try await h.postgres.run(MergeActivityStatesStatement(items: round), pooling: .session, logger: logger) {}
            }
            let expected = try await rows(h.postgres, alone)
            try #require(expected.count == 3)
            #expect(try await rows(h.postgres, batched) == expected)
            // The stale ones changed nothing: run 6 in progress, version kept from the first.
            #expect(expected[0] == "a|1.0|inProgress|6|3|[]")
            #expect(expected[2] == "c||inProgress|123456789012345678|1|[]")
        }
    }

    @Test func concurrentCallsOnOneActivityAreAllAppliedInTheirOrder() async throws {
        try await RegistrationHarness.run { h in
            let store = StudyStateStore(
                client: h.postgres, seal: RowSeal.appTokens(encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!),
                audit: AuditLog(client: h.postgres, logger: logger), logger: logger)
            var users: [UUID] = []
            for _ in 0..<40 { users.append(try await participant(h.postgres)) }
            // Forty participants at once, each twice on the same new activity: a batch holding
            // both applies them in two rounds.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for userId in users {
                    group.addTask { try await store.update([update("new", run: "1", state: "inProgress", total: 1)], userId: userId) }
                    group.addTask { try await store.update([update("new", run: "2", state: "inProgress", total: 2)], userId: userId) }
                }
                try await group.waitForAll()
            }
            // Why rounds: MERGE refuses to write one new row twice.
            let twice = try [1, 2].map {
                try UpsertActivityStatement(update: update("twice", run: "\($0)", state: "inProgress"), userId: users[0], now: Date())
            }
            await #expect(throws: PSQLError.self) {
                for try await _ in try await h.postgres.run(MergeActivityStatesStatement(items: twice), pooling: .session, logger: logger) {}
            }
            var counts: [String: Int] = [:]
            for try await (run, count) in try await h.postgres.query(
                "SELECT activity_run_id, count(*)::int FROM participant_activities GROUP BY activity_run_id", logger: logger
            ).decode((String, Int).self) { counts[run] = count }
            // Every participant's newest run, whichever order the two arrived in.
            #expect(counts == ["2": 40])
        }
    }
}
