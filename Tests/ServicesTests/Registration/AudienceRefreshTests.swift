import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Phones refreshing their sign-ins at once. Each refresh moves a device from the hour its old
/// sign-in ran out to the hour of the new one, in every study its participant has joined. Two
/// participants' refreshes touch none of each other's rows, so neither may fail for the other,
/// however their hours cross.
@Suite(.needsCluster) struct AudienceRefreshTests {
    /// Sixteen participants of one shard (`tally_shard`), so that every refresh counts in the
    /// same few rows; eight connections, each refreshing its own two participants' sessions
    /// between two hours in turn, so that one moves a device from the first hour to the second
    /// while another moves one back. None of the refreshes may fail, and the count stays exact.
    @Test func refreshesOfParticipantsAtOnceAllSucceedAndStayCounted() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience-refresh")
            var users: [UUID] = []
            for try await user in try await h.postgres.query(
                """
                SELECT u FROM (SELECT gen_random_uuid() AS u FROM generate_series(1, 4000)) candidates
                WHERE tally_shard(u) = 0 LIMIT 16
                """, logger: logger
            ).decode(UUID.self) { users.append(user) }
            try #require(users.count == 16)
            try await h.postgres.withConnection { connection in
                for (index, user) in users.enumerated() {
                    try await AudienceDeviceTests.joinedWithNotifications(user, on: connection, logger: logger)
                    try await connection.query(
                        "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), 'AUDB', 'completed')",
                        logger: logger)
                    try await AudienceDeviceTests.signIn(
                        user, expires: "now() + interval '\(index % 2 == 0 ? 5 : 7) hours'", token: String(repeating: "ab", count: 32),
                        os: index % 3 == 0 ? "android" : "ios", on: connection, logger: logger)
                }
            }
            let store = AudienceDeviceTests.store(h.postgres, logger)
            #expect(try await store.audience(studyId: "AUDA") == StudyAudience(participants: 16, devices: 16))

            let postgres = h.postgres
            var refreshed = 0
            var failures: [String] = []
            try await withThrowingTaskGroup(of: (refreshed: Int, failures: [String]).self) { group in
                for worker in 0..<8 {
                    let own = [users[worker * 2], users[worker * 2 + 1]]
                    group.addTask {
                        var done = (refreshed: 0, failures: [String]())
                        for round in 0..<40 {
                            let user = own[round % 2]
                            do {
                                // What a refresh changes of the session (SessionStore.refresh).
                                try await postgres.query(
                                    """
                                    UPDATE participant_sessions SET auth_hash = gen_random_uuid()::text, refresh_hash = gen_random_uuid()::text,
                                        auth_expires_at = now() + interval '1 hour', last_used_at = now(),
                                        refresh_expires_at = CASE WHEN epoch_hour(refresh_expires_at) = epoch_hour(now() + interval '5 hours')
                                                                  THEN now() + interval '7 hours' ELSE now() + interval '5 hours' END
                                    WHERE user_id = \(user)
                                    """, logger: logger)
                                done.refreshed += 1
                            } catch {
                                done.failures.append(String(reflecting: error))
                            }
                        }
                        return done
                    }
                }
                for try await done in group {
                    refreshed += done.refreshed
                    failures += done.failures
                }
            }
            #expect(failures.isEmpty, "\(failures.count) failed: \(failures.prefix(2))")
            #expect(refreshed == 320)
            // Counted from the changes the refreshes wrote, then from the kept rows once folded.
            for fold in [false, true] {
                if fold { #expect(try await store.foldChanges() > 0) }
                for study in AudienceDeviceTests.studies {
                    let counted = try await AudienceDeviceTests.overEveryRow(study, h.postgres, logger)
                    #expect(counted.devices == 16, "\(study)")
                    #expect(try await store.audience(studyId: study) == counted, "\(study), folded: \(fold)")
                }
            }
        }
    }

    /// The worker's fold while a participant's change is still being made: the fold neither
    /// waits for it nor takes it, and the change is counted once it commits, then folded.
    @Test func aFoldLeavesAChangeNotYetCommittedForTheNext() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience-refresh")
            let user = UUID()
            try await h.postgres.withConnection { connection in
                try await AudienceDeviceTests.joinedWithNotifications(user, on: connection, logger: logger)
            }
            let store = AudienceDeviceTests.store(h.postgres, logger)
            try await h.postgres.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                try await AudienceDeviceTests.signIn(
                    user, expires: "now() + interval '3 hours'", token: String(repeating: "ab", count: 32), os: "ios",
                    on: connection, logger: logger)
                #expect(try await store.foldChanges() == 0)
                try await connection.query("COMMIT", logger: logger)
            }
            let one = StudyAudience(participants: 1, devices: 1)
            #expect(try await store.audience(studyId: "AUDA") == one)
            #expect(try await store.foldChanges() == 1)
            #expect(try await store.audience(studyId: "AUDA") == one)
            var waiting = -1
            for try await count in try await h.postgres.query("SELECT count(*)::int FROM study_audience_changes", logger: logger)
                .decode(Int.self) { waiting = count }
            #expect(waiting == 0)
        }
    }
}
