import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Synchronization
import Testing
import TestSupport

/// The messages page's audience read from kept counts (`study_audience_devices`, the tallies)
/// against the same counted over every participant and session, as the page counted it before:
/// after a random history of sign-ins, push tokens, refreshes, sign-outs, settings, statuses and
/// deleted accounts, from one connection and from several at once, across the hour boundary a
/// sign-in runs out on.
@Suite(.needsCluster) struct AudienceDeviceTests {
    static let studies = ["AUDA", "AUDB"]
    /// Joined more often than not, as in a study under way.
    static let statuses = ["yetToJoin", "inProgress", "completed", "Withdrawn", "notEligible", "inProgress", "completed"]

    static func store(_ postgres: PostgresClient, _ logger: Logger) -> PushAudienceStore {
        PushAudienceStore(client: postgres, audit: AuditLog(client: postgres, logger: logger), logger: logger)
    }

    /// Who a study message sent now reaches, over every row, as the page counted it before the
    /// counts were kept.
    static func overEveryRow(_ studyId: String, _ postgres: PostgresClient, _ logger: Logger) async throws -> StudyAudience {
        for try await (participants, devices) in try await postgres.query(
            """
            SELECT count(DISTINCT ps.user_id)::int,
                   (count(s.id) FILTER (WHERE s.revoked_at IS NULL AND s.refresh_expires_at > now()
                       AND s.device_token IS NOT NULL AND s.device_os IN ('ios', 'android')
                       AND coalesce((p.settings ->> 'remoteNotifications')::boolean, false)))::int
            FROM participant_studies ps
            JOIN participants p ON p.user_id = ps.user_id
            LEFT JOIN participant_sessions s ON s.user_id = p.user_id
            WHERE ps.study_id = \(studyId) AND ps.status NOT IN ('yetToJoin', 'Withdrawn', 'notEligible')
            """, logger: logger
        ).decode((Int, Int).self) {
            return StudyAudience(participants: participants, devices: devices)
        }
        return StudyAudience(participants: 0, devices: 0)
    }

    /// When a session's sign-in runs out: hours ahead, within the hour now but still ahead, within
    /// the hour now and already past (the start of the hour at the latest), or hours ago.
    static func expiry(_ random: inout SeededRandom) -> String {
        switch random.next(6) {
        case 0: "greatest(to_timestamp(epoch_hour(now()) * 3600), now() - interval '1 minute')"
        case 1: "now() - interval '3 hours'"
        case 2: "now() + interval '1 minute'"
        default: "now() + interval '\(random.next(48)) hours \(random.next(60)) minutes'"
        }
    }

    /// One random change of a participant's rows. `joining` false: no row or account made or
    /// deleted, only changed.
    static func change(
        _ random: inout SeededRandom, users: [UUID], on connection: PostgresConnection, logger: Logger, joining: Bool = true
    ) async throws {
        let user = users[random.next(users.count)]
        let study = studies[random.next(studies.count)]
        let expires = expiry(&random)
        let token = random.next(5) == 0 ? nil : String(repeating: "ab", count: 32)
        let os = ["ios", "android", "ios", "android", "web", nil][random.next(6)]
        switch random.next(joining ? 11 : 6) {
        case 0:
            try await connection.query(
                "UPDATE participant_studies SET status = \(statuses[random.next(statuses.count)]) WHERE user_id = \(user) AND study_id = \(study)",
                logger: logger)
        case 1:
            // Notifications switched on or off (or the same again).
            try await connection.query(
                """
                UPDATE participants SET settings = jsonb_set(settings, '{remoteNotifications}', to_jsonb(\(random.next(4) != 0)))
                WHERE user_id = \(user)
                """, logger: logger)
        case 2:
            // A refresh: the sign-in runs out later (or, here, at any of the moments above).
            try await connection.query(
                """
                UPDATE participant_sessions SET refresh_expires_at = \(unescaped: expires)
                WHERE id = (SELECT id FROM participant_sessions WHERE user_id = \(user) ORDER BY id LIMIT 1)
                """, logger: logger)
        case 3:
            // The app reports its push token and platform.
            try await connection.query(
                """
                UPDATE participant_sessions SET device_token = \(token), device_os = \(os)
                WHERE id = (SELECT id FROM participant_sessions WHERE user_id = \(user) ORDER BY id DESC LIMIT 1)
                """, logger: logger)
        case 4:
            // Signed out (its token forgotten, as `revoke` does), or only revoked.
            try await connection.query(
                """
                UPDATE participant_sessions SET revoked_at = now(), device_token = CASE WHEN \(random.next(2) == 0) THEN NULL ELSE device_token END
                WHERE id = (SELECT id FROM participant_sessions WHERE user_id = \(user) AND revoked_at IS NULL ORDER BY id LIMIT 1)
                """, logger: logger)
        case 5:
            // Another participant's session moved to this one (no route does; the trigger follows it).
            let other = users[random.next(users.count)]
            try await connection.query(
                """
                UPDATE participant_sessions SET user_id = \(other)
                WHERE id = (SELECT id FROM participant_sessions WHERE user_id = \(user) ORDER BY id LIMIT 1)
                """, logger: logger)
        case 6, 7:
            try await signIn(user, expires: expires, token: token, os: os, on: connection, logger: logger)
        case 8:
            try await connection.query(
                """
                INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), \(study), \(statuses[random.next(statuses.count)]))
                ON CONFLICT (user_id, study_id) DO UPDATE SET status = excluded.status
                """, logger: logger)
        case 9:
            if random.next(2) == 0 {
                try await connection.query(
                    "DELETE FROM participant_studies WHERE user_id = \(user) AND study_id = \(study)", logger: logger)
            } else {
                try await connection.query(
                    "DELETE FROM participant_sessions WHERE id = (SELECT id FROM participant_sessions WHERE user_id = \(user) ORDER BY id LIMIT 1)",
                    logger: logger)
            }
        default:
            // The account deleted (every row of theirs goes with it), then made again.
            try await connection.query("DELETE FROM participants WHERE user_id = \(user)", logger: logger)
            try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
        }
    }

    static func signIn(
        _ user: UUID, expires: String, token: String?, os: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let (auth, refresh) = (UUID().uuidString, UUID().uuidString)
        try await connection.query(
            """
            INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at, device_token, device_os)
            VALUES (gen_random_uuid(), \(user), \(auth), now() + interval '30 minutes', \(refresh), \(unescaped: expires), \(token), \(os))
            """, logger: logger)
    }

    @Test func theKeptAudienceIsTheAudienceOverEveryRowAfterARandomHistory() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let users = (0..<10).map { _ in UUID() }
            let store = Self.store(h.postgres, logger)
            var compared = 0
            var mostDevices = 0
            try await h.postgres.withConnection { connection in
                for user in users { try await StudyTallyTests.insertAccount(user, on: connection, logger: logger) }
                var random = SeededRandom(seed: 20_261_207)
                for step in 1...800 {
                    try await Self.change(&random, users: users, on: connection, logger: logger)
                    // The worker's fold, now and then: compared both with changes waiting and
                    // with none.
                    if random.next(30) == 0 { _ = try await store.foldChanges() }
                    guard step % 40 == 0 else { continue }
                    for study in Self.studies {
                        let counted = try await Self.overEveryRow(study, h.postgres, logger)
                        let kept = try await store.audience(studyId: study)
                        #expect(kept == counted, "\(study) after \(step) changes: kept \(kept), over every row \(counted)")
                        compared += 1
                        mostDevices = max(mostDevices, counted.devices)
                    }
                }
            }
            #expect(compared == 40)
            #expect(mostDevices > 1, "the history had devices to count")
        }
    }

    @Test func theKeptAudienceStaysExactWhenParticipantsChangeAtOnce() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let users = (0..<5).map { _ in UUID() }
            try await h.postgres.withConnection { connection in
                for user in users {
                    try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
                    for study in Self.studies {
                        try await connection.query(
                            "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), \(study), 'inProgress')",
                            logger: logger)
                    }
                }
            }
            // Four connections change the same few participants' sessions, settings, statuses
            // and study rows at once, each a transaction of a few changes, signing in and
            // joining included (their new rows are what no row lock could hold: the
            // participant's row orders them). Nothing the database rolls back may stay counted.
            // The worker's fold runs beside them all the while: it waits for no change, and
            // takes those committed before it.
            let store = Self.store(h.postgres, logger)
            let changed = DoneFlag()
            async let folds: Int = {
                var folds = 0
                while !changed.isSet {
                    _ = try await store.foldChanges()
                    folds += 1
                    try await Task.sleep(for: .milliseconds(5))
                }
                return folds
            }()
            try await changeAtOnce(h.postgres, logger: logger) { random, connection in
                let joining = random.next(4) == 0
                try await Self.change(&random, users: users, on: connection, logger: logger, joining: joining)
            }
            changed.set()
            #expect(try await folds > 1)
            for study in Self.studies {
                let counted = try await Self.overEveryRow(study, h.postgres, logger)
                #expect(try await store.audience(studyId: study) == counted, "\(study)")
            }
        }
    }

    /// Two changes of one participant that each move a device in or out, the second made while
    /// the first's transaction is still open: a sign-in with a push token, joining the study (a
    /// new study row), a status that joins it, notifications switched on. Neither sees the
    /// other's row until it commits, so each must wait on the participant's row for the other;
    /// with no wait, both would count nothing and the device would be missed.
    static let interleavings: [(first: String, second: String)] = [
        ("signIn", "status"), ("status", "signIn"), ("signIn", "join"), ("join", "signIn"),
        ("signIn", "settings"), ("settings", "signIn"), ("status", "settings"), ("settings", "status"),
        ("token", "status"), ("settings", "token"),
    ]

    /// One of the changes above for `user`, who starts yet to join AUDA with notifications off
    /// and one session without a push token (no `join`: no study row).
    static func interleaved(_ change: String, _ user: UUID) -> PostgresQuery {
        switch change {
        case "signIn":
            """
            INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at, device_token, device_os)
            VALUES (gen_random_uuid(), \(user), gen_random_uuid()::text, now() + interval '30 minutes', gen_random_uuid()::text,
                    now() + interval '3 hours', \(String(repeating: "ab", count: 32)), 'ios')
            """
        case "token":
            "UPDATE participant_sessions SET device_token = \(String(repeating: "cd", count: 32)), device_os = 'android' WHERE user_id = \(user)"
        case "status":
            "UPDATE participant_studies SET status = 'inProgress' WHERE user_id = \(user) AND study_id = 'AUDA'"
        case "join":
            "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), 'AUDA', 'inProgress')"
        default:
            "UPDATE participants SET settings = '{\"remoteNotifications\": true}' WHERE user_id = \(user)"
        }
    }

    @Test(arguments: interleavings)
    func aChangeMadeWhileAnotherIsOpenIsCountedAfterIt(first: String, second: String) async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let user = UUID()
            let joins = first == "join" || second == "join"
            try await h.postgres.withConnection { connection in
                try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
                if !joins {
                    try await connection.query(
                        "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), 'AUDA', 'yetToJoin')", logger: logger)
                }
                if !(first == "settings" || second == "settings") {
                    try await connection.query(
                        "UPDATE participants SET settings = '{\"remoteNotifications\": true}' WHERE user_id = \(user)", logger: logger)
                }
                if !(first == "status" || second == "status" || joins) {
                    try await connection.query(
                        "UPDATE participant_studies SET status = 'inProgress' WHERE user_id = \(user)", logger: logger)
                }
                let signsIn = first == "signIn" || second == "signIn" || first == "token" || second == "token"
                try await Self.signIn(
                    user, expires: "now() + interval '5 hours'", token: signsIn ? nil : String(repeating: "ef", count: 32),
                    os: signsIn ? nil : "ios", on: connection, logger: logger)
            }
            let secondDone = DoneFlag()
            let postgres = h.postgres
            let secondQuery = Self.interleaved(second, user)
            try await h.postgres.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                try await connection.query(Self.interleaved(first, user), logger: logger)
                let second = Task {
                    try await postgres.query(secondQuery, logger: logger)
                    secondDone.set()
                }
                // The second is under way once it waits on a lock (or, were it not to wait, once
                // it is done): then the first commits.
                let deadline = ContinuousClock.now + .seconds(10)
                while !secondDone.isSet {
                    var waiting = 0
                    for try await count in try await h.postgres.query(
                        "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
                        logger: logger
                    ).decode(Int.self) { waiting = count }
                    if waiting > 0 { break }
                    guard ContinuousClock.now < deadline else { Issue.record("the second change neither waited nor ended"); break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await connection.query("COMMIT", logger: logger)
                try await second.value
            }
            let counted = try await Self.overEveryRow("AUDA", h.postgres, logger)
            #expect(counted == StudyAudience(participants: 1, devices: 1), "the setup reaches one device when both are done")
            #expect(try await Self.store(h.postgres, logger).audience(studyId: "AUDA") == counted, "\(first) then \(second)")
        }
    }

    /// An account with notifications on that has joined AUDA.
    static func joinedWithNotifications(_ user: UUID, on connection: PostgresConnection, logger: Logger) async throws {
                try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
                try await connection.query(
                    "UPDATE participants SET settings = '{\"remoteNotifications\": true}' WHERE user_id = \(user)", logger: logger)
                try await connection.query(
                    "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(user), 'AUDA', 'inProgress')", logger: logger)
    }

    @Test func aSignInThatRanOutWithinTheHourIsNotCountedThoughItsHourIsKept() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let user = UUID()
            try await h.postgres.withConnection { connection in
                try await Self.joinedWithNotifications(user, on: connection, logger: logger)
                try await Self.signIn(
                    user, expires: "now() + interval '2 hours'", token: String(repeating: "cd", count: 32), os: "ios",
                    on: connection, logger: logger)
                try await Self.signIn(
                    user, expires: "greatest(to_timestamp(epoch_hour(now()) * 3600), now() - interval '1 minute')",
                    token: String(repeating: "ef", count: 32), os: "android", on: connection, logger: logger)
            }
            let store = Self.store(h.postgres, logger)
            #expect(try await store.audience(studyId: "AUDA") == StudyAudience(participants: 1, devices: 1))
            // Folded, the hour now is kept with the hours to come.
            _ = try await store.foldChanges()
            var kept = 0
            for try await devices in try await h.postgres.query(
                "SELECT coalesce(sum(devices), 0)::int FROM study_audience_devices WHERE study_id = 'AUDA'", logger: logger
            ).decode(Int.self) { kept = devices }
            #expect(kept == 2, "both sign-ins are kept by their hour")
            #expect(try await store.audience(studyId: "AUDA") == StudyAudience(participants: 1, devices: 1))
        }
    }

    @Test func hoursPastArePrunedAndCountForNothing() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let user = UUID()
            try await h.postgres.withConnection { connection in
                try await Self.joinedWithNotifications(user, on: connection, logger: logger)
                try await Self.signIn(
                    user, expires: "now() + interval '5 hours'", token: String(repeating: "cd", count: 32), os: "ios",
                    on: connection, logger: logger)
                // What a count of hours ago leaves behind, written as the triggers would have.
                try await connection.query(
                    """
                    INSERT INTO study_audience_devices (study_id, expires_hour, shard, devices)
                    VALUES ('AUDA', epoch_hour(now()) - 2, 0, 7), ('AUDB', epoch_hour(now()) - 30, 3, -1)
                    """, logger: logger)
            }
            let store = Self.store(h.postgres, logger)
            #expect(try await store.audience(studyId: "AUDA") == StudyAudience(participants: 1, devices: 1))
            // The sign-in's change added to its hour's row, and the two hours past gone.
            #expect(try await store.foldChanges() == 3)
            #expect(try await store.foldChanges() == 0)
            #expect(try await store.audience(studyId: "AUDA") == StudyAudience(participants: 1, devices: 1))
            var rows = 0
            for try await count in try await h.postgres.query("SELECT count(*)::int FROM study_audience_devices", logger: logger)
                .decode(Int.self) { rows = count }
            #expect(rows == 1, "the hour to come stays")
        }
    }

    @Test func theKeptDevicesAreMadeAgainFromTheRowsWhenAskedFor() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "audience")
            let users = (0..<8).map { _ in UUID() }
            try await h.postgres.withConnection { connection in
                for user in users { try await StudyTallyTests.insertAccount(user, on: connection, logger: logger) }
                var random = SeededRandom(seed: 11)
                for _ in 0..<300 { try await Self.change(&random, users: users, on: connection, logger: logger) }
            }
            let store = Self.store(h.postgres, logger)
            let before = try await store.audience(studyId: "AUDA")
            // What the benchmark's bulk seed does after writing rows with the triggers off.
            try await h.postgres.query("DELETE FROM study_audience_devices", logger: logger)
            try await h.postgres.query("SELECT recount_audience_devices('AUDA')", logger: logger)
            #expect(try await store.audience(studyId: "AUDA") == before)
            #expect(before == (try await Self.overEveryRow("AUDA", h.postgres, logger)))
        }
    }
}

/// Set once by a task another waits beside.
final class DoneFlag: Sendable {
    private let done = Mutex(false)
    func set() { done.withLock { $0 = true } }
    var isSet: Bool { done.withLock { $0 } }
}
