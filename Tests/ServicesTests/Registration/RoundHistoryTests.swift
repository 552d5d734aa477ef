import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// What a round of the count sweep reads of its participants at once
/// (`ParticipantRunStore.histories`) is what reading each participant alone gives, the reads
/// every count made before rounds were read together: with participants of every kind in one
/// round, and when the round's bound on rows cuts it, the rest read one by one.
@Suite(.needsCluster) struct RoundHistoryTests {
    static let logger = Logger(label: "round-history")

    /// Forty participants of two studies: enrolled or not, withdrawn, with and without the id
    /// their app holds, a last device or none, completions and arrivals before and after they
    /// enrolled, settlements stored or not, date answers and date properties; and accounts that
    /// are not in the study asked about.
    static func seed(_ postgres: PostgresClient) async throws -> [ParticipantHistoryRequest] {
        var random = SeededRandom(seed: 20_261_206_59)
        var wanted: [ParticipantHistoryRequest] = []
        let enrolled = Date(timeIntervalSince1970: 1_780_000_000)
        try await postgres.withConnection { connection in
            var responseId: Int64 = 0
            for k in 0..<40 {
                let user = UUID()
                let study = k % 3 == 0 ? "ROUNDB" : "ROUNDA"
                try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
                wanted.append(ParticipantHistoryRequest(studyId: study, userId: user, anchored: random.next(2) == 0))
                if k % 13 == 5 { continue }  // an account not in the study
                let hash: String? = random.next(4) == 0 ? nil : "hash-\(k)"
                let enrolledAt: Date? = random.next(6) == 0 ? nil : enrolled.addingTimeInterval(Double(random.next(86_400)))
                let withdrawnAt: Date? = random.next(5) == 0 ? enrolled.addingTimeInterval(30 * 86_400) : nil
                try await connection.query(
                    """
                    INSERT INTO participant_studies (user_id, study_id, status, enrolled_at, withdrawn_at, participant_token_hash)
                    VALUES (\(user), \(study), \(withdrawnAt == nil ? "inProgress" : "Withdrawn"), \(enrolledAt), \(withdrawnAt), \(hash))
                    """, logger: logger)
                if random.next(3) > 0 {
                    let os = random.next(2) == 0 ? "ios" : "android"
                    try await connection.query(
                        """
                        INSERT INTO participant_sessions (id, user_id, auth_hash, refresh_hash, auth_expires_at, refresh_expires_at,
                                                          device_os, last_used_at)
                        VALUES (gen_random_uuid(), \(user), \("auth-\(k)"), \("refresh-\(k)"), now() + interval '1 hour',
                                now() + interval '1 day', \(os), now())
                        """, logger: logger)
                }
                // Some before enrolment (not read), most after, a few at the same instant.
                for run in 0..<random.next(30) {
                    let at = enrolled.addingTimeInterval(Double(random.next(60 * 86_400) - 5 * 86_400))
                    try await connection.query(
                        """
                        INSERT INTO participant_run_completions (user_id, study_id, activity_id, run_id, completed_at)
                        VALUES (\(user), \(study), \("a\(random.next(3))"), \(run + 1), \(at))
                        """, logger: logger)
                }
                guard let hash else { continue }
                for run in 0..<random.next(30) {
                    responseId += 1
                    let at = enrolled.addingTimeInterval(Double(random.next(60 * 86_400) - 5 * 86_400))
                    let answers: String? = random.next(4) == 0 ? #"{"Surgery": "2026-05-0\#(1 + random.next(9))"}"# : nil
                    try await connection.query(
                        """
                        INSERT INTO response_arrivals (response_id, study_id, participant_token_hash, activity_id, run_id, received_at,
                                                       finished_at, offset_minutes, date_answers)
                        VALUES (\(responseId), \(study), \(hash), \(random.next(2) == 0 ? "Daily" : "daily"),
                                \(random.next(5) == 0 ? nil : run + 1), \(at), \(at.addingTimeInterval(-60)), \(random.next(2) == 0 ? nil : 600),
                                \(answers)::jsonb)
                        """, logger: logger)
                    if random.next(3) == 0 {
                        try await connection.query(
                            "INSERT INTO response_settlements (response_id, number, stored) VALUES (\(responseId), \(responseId), \(random.next(2) == 0))",
                            logger: logger)
                    }
                }
                if random.next(2) == 0 {
                    try await connection.query(
                        """
                        INSERT INTO participant_property_dates (study_id, participant_token_hash, dates, as_of)
                        VALUES (\(study), \(hash), \(#"{"surgeryDate": "2026-04-1\#(random.next(9))", "Other": "not a date"}"#)::jsonb, now())
                        """, logger: logger)
                }
            }
        }
        return wanted
    }

    @Test func aRoundReadTogetherIsWhatEachParticipantReadAloneGives() async throws {
        try await RegistrationHarness.run { h in
            let store = ParticipantRunStore(client: h.postgres, logger: Self.logger)
            let wanted = try await Self.seed(h.postgres)
            let now = Date(timeIntervalSince1970: 1_785_000_000)
            let alone = try await store.historiesOneByOne(of: wanted, now: now)
            #expect(alone.count == 40)
            #expect(alone.filter { $0 == nil }.count == 3, "the accounts not in the study are not found")
            let rows = alone.compactMap { $0 }.map { $0.completions.count + $0.arrivals.count }.reduce(0, +)
            #expect(rows > 400, "the round has rows to read: \(rows)")
            #expect(alone.contains { !($0?.anchors.answers.isEmpty ?? true) } && alone.contains { !($0?.anchors.properties.isEmpty ?? true) })

            // The whole round at once, then cut by ever smaller bounds: the participants past the
            // bound are read alone, and the round is the same each time.
            for bound in [ParticipantRunStore.roundRows, 300, 40, 1] {
                let together = try await store.histories(of: wanted, now: now, roundRows: bound)
                try #require(together.count == alone.count)
                for (index, (read, expected)) in zip(together, alone).enumerated() {
                    // Arrivals received at the same instant may come in either order, alone as together.
                    #expect(read?.participant == expected?.participant, "participant \(index), bound \(bound)")
                    #expect(read?.completions == expected?.completions, "participant \(index)'s completions, bound \(bound)")
                    #expect(read.map { Self.sorted($0.arrivals) } == expected.map { Self.sorted($0.arrivals) }, "participant \(index)'s arrivals, bound \(bound)")
                    #expect(read?.anchors == expected?.anchors, "participant \(index)'s anchors, bound \(bound)")
                }
            }
            #expect(try await store.histories(of: [], now: now).isEmpty)
        }
    }

    /// Arrivals in an order that does not depend on how ties were broken.
    static func sorted(_ arrivals: [ResponseArrival]) -> [String] {
        arrivals.map { "\($0.receivedAt.timeIntervalSince1970) \($0.activityId) \($0.runId ?? -1) \($0.stored)" }.sorted()
    }
}
