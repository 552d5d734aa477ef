import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// What a round of the count sweep reads of its participants at once
/// (`ParticipantRunStore.histories`), and what reading one participant alone gives, are what the
/// seed wrote: the expected histories are kept in Swift as the rows are inserted, by the rules a
/// count reads by (completions and arrivals since enrolment, a settlement's `stored`, the last
/// device, the newest answer per activity and key), not read back by the store's SQL. With
/// participants of every kind in one round, and when the round's bound on rows cuts it, the rest
/// read one by one.
@Suite(.needsCluster) struct RoundHistoryTests {
    static let logger = Logger(label: "round-history")

    /// Forty participants of two studies: enrolled or not, withdrawn, with and without the id
    /// their app holds, a last device or none, completions and arrivals before and after they
    /// enrolled, settlements stored or not, date answers and date properties; and accounts that
    /// are not in the study asked about. Returns who is asked about, and what a count should read
    /// of each as of `now` (nil for an account not in the study).
    static func seed(_ postgres: PostgresClient, now: Date) async throws -> [(ParticipantHistoryRequest, ParticipantHistoryRecord?)] {
        var random = SeededRandom(seed: 20_261_206_59)
        var wanted: [(ParticipantHistoryRequest, ParticipantHistoryRecord?)] = []
        let enrolled = Date(timeIntervalSince1970: 1_780_000_000)
        try await postgres.withConnection { connection in
            var responseId: Int64 = 0
            for k in 0..<40 {
                let user = UUID()
                let study = k % 3 == 0 ? "ROUNDB" : "ROUNDA"
                try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
                let request = ParticipantHistoryRequest(studyId: study, userId: user, anchored: random.next(2) == 0)
                if k % 13 == 5 {  // an account not in the study
                    wanted.append((request, nil))
                    continue
                }
                let hash: String? = random.next(4) == 0 ? nil : "hash-\(k)"
                let enrolledAt: Date? = random.next(6) == 0 ? nil : enrolled.addingTimeInterval(Double(random.next(86_400)))
                let withdrawnAt: Date? = random.next(5) == 0 ? enrolled.addingTimeInterval(30 * 86_400) : nil
                try await connection.query(
                    """
                    INSERT INTO participant_studies (user_id, study_id, status, enrolled_at, withdrawn_at, participant_token_hash)
                    VALUES (\(user), \(study), \(withdrawnAt == nil ? "inProgress" : "Withdrawn"), \(enrolledAt), \(withdrawnAt), \(hash))
                    """, logger: logger)
                // What a count reads from here on: the rows from the time it counts from.
                let since = enrolledAt ?? now
                var expected = ParticipantHistoryRecord(
                    participant: .init(userId: user, enrolledAt: enrolledAt, withdrawnAt: withdrawnAt, appTokenSHA256: hash),
                    completions: [], arrivals: [], anchors: ParticipantAnchors())
                defer { wanted.append((request, expected)) }
                if random.next(3) > 0 {
                    let os = random.next(2) == 0 ? "ios" : "android"
                    expected.participant.deviceOS = os
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
                    let activity = "a\(random.next(3))"
                    try await connection.query(
                        """
                        INSERT INTO participant_run_completions (user_id, study_id, activity_id, run_id, completed_at)
                        VALUES (\(user), \(study), \(activity), \(run + 1), \(at))
                        """, logger: logger)
                    if at >= since { expected.completions.append(RunCompletion(activityId: activity, runId: run + 1, source: .app, at: at)) }
                }
                guard let hash else { continue }
                for run in 0..<random.next(30) {
                    responseId += 1
                    let at = enrolled.addingTimeInterval(Double(random.next(60 * 86_400) - 5 * 86_400))
                    let surgeryDay = random.next(4) == 0 ? 1 + random.next(9) : nil
                    let answers = surgeryDay.map { #"{"Surgery": "2026-05-0\#($0)"}"# }
                    let activity = random.next(2) == 0 ? "Daily" : "daily"
                    let runId = random.next(5) == 0 ? nil : run + 1
                    let offset = random.next(2) == 0 ? nil : 600
                    try await connection.query(
                        """
                        INSERT INTO response_arrivals (response_id, study_id, participant_token_hash, activity_id, run_id, received_at,
                                                       finished_at, offset_minutes, date_answers)
                        VALUES (\(responseId), \(study), \(hash), \(activity), \(runId), \(at), \(at.addingTimeInterval(-60)), \(offset),
                                \(answers)::jsonb)
                        """, logger: logger)
                    // An arrival without a settlement is counted as stored (its processing has not said otherwise).
                    var stored = true
                    if random.next(3) == 0 {
                        stored = random.next(2) == 0
                        try await connection.query(
                            "INSERT INTO response_settlements (response_id, number, stored) VALUES (\(responseId), \(responseId), \(stored))",
                            logger: logger)
                    }
                    if at >= since {
                        expected.arrivals.append(ResponseArrival(
                            activityId: activity, runId: runId, receivedAt: at, finishedAt: at.addingTimeInterval(-60), offsetMinutes: offset,
                            stored: stored))
                    }
                    // Answers are read whenever they came (an anchor may lie before enrolment); the
                    // newest response's answer wins, its activity and key without case.
                    if request.anchored, let surgeryDay {
                        expected.anchors.answers["daily", default: [:]]["surgery"] = GregorianDays.days(year: 2026, month: 5, day: surgeryDay)
                    }
                }
                if random.next(2) == 0 {
                    let day = 10 + random.next(9)
                    try await connection.query(
                        """
                        INSERT INTO participant_property_dates (study_id, participant_token_hash, dates, as_of)
                        VALUES (\(study), \(hash), \(#"{"surgeryDate": "2026-04-\#(day)", "Other": "not a date"}"#)::jsonb, now())
                        """, logger: logger)
                    // Keys without case; a value that is not a date is not an anchor.
                    if request.anchored { expected.anchors.properties["surgerydate"] = GregorianDays.days(year: 2026, month: 4, day: day) }
                }
            }
        }
        return wanted
    }

    @Test func aRoundReadTogetherAndEachParticipantReadAloneAreWhatWasWritten() async throws {
        try await RegistrationHarness.run { h in
            let store = ParticipantRunStore(client: h.postgres, logger: Self.logger)
            let now = Date(timeIntervalSince1970: 1_785_000_000)
            let seeded = try await Self.seed(h.postgres, now: now)
            let wanted = seeded.map(\.0)
            let expected = seeded.map(\.1)
            try #require(expected.count == 40)
            #expect(expected.filter { $0 == nil }.count == 3, "three accounts are not in the study")
            let rows = expected.compactMap { $0 }.map { $0.completions.count + $0.arrivals.count }.reduce(0, +)
            #expect(rows > 400, "the round has rows to read: \(rows)")
            #expect(expected.contains { !($0?.anchors.answers.isEmpty ?? true) } && expected.contains { !($0?.anchors.properties.isEmpty ?? true) })
            #expect(expected.contains { $0?.participant.enrolledAt == nil } && expected.contains { $0?.participant.withdrawnAt != nil })
            #expect(expected.contains { $0?.arrivals.contains { !$0.stored } ?? false }, "some arrival could not be stored")

            // Each participant alone, the whole round at once, then the round cut by ever smaller
            // bounds (the participants past the bound read alone): each time what was written.
            let alone = try await store.historiesOneByOne(of: wanted, now: now)
            Self.expectSame(alone, expected, "alone")
            for bound in [ParticipantRunStore.roundRows, 300, 40, 1] {
                Self.expectSame(try await store.histories(of: wanted, now: now, roundRows: bound), expected, "bound \(bound)")
            }
            #expect(try await store.histories(of: [], now: now).isEmpty)
        }
    }

    static func expectSame(_ read: [ParticipantHistoryRecord?], _ expected: [ParticipantHistoryRecord?], _ how: String) {
        guard read.count == expected.count else {
            Issue.record("\(read.count) histories read, \(expected.count) asked for (\(how))")
            return
        }
        for (index, (read, expected)) in zip(read, expected).enumerated() {
            #expect(read?.participant == expected?.participant, "participant \(index) (\(how))")
            // Completions oldest first, arrivals newest first; rows of the same instant in either order.
            #expect(read.map { $0.completions.map(\.at) == $0.completions.map(\.at).sorted() } ?? true, "participant \(index)'s completions in order (\(how))")
            #expect(read.map { $0.arrivals.map(\.receivedAt) == $0.arrivals.map(\.receivedAt).sorted(by: >) } ?? true, "participant \(index)'s arrivals in order (\(how))")
            #expect(read.map { sorted($0.completions) } == expected.map { sorted($0.completions) }, "participant \(index)'s completions (\(how))")
            #expect(read.map { sorted($0.arrivals) } == expected.map { sorted($0.arrivals) }, "participant \(index)'s arrivals (\(how))")
            #expect(read?.anchors == expected?.anchors, "participant \(index)'s anchors (\(how))")
        }
    }

    /// Completions in an order that does not depend on how ties were broken.
    static func sorted(_ completions: [RunCompletion]) -> [String] {
        completions.map { "\($0.at.timeIntervalSince1970) \($0.activityId) \($0.runId ?? -1) \($0.source)" }.sorted()
    }

    /// Arrivals in an order that does not depend on how ties were broken.
    static func sorted(_ arrivals: [ResponseArrival]) -> [String] {
        arrivals.map {
            "\($0.receivedAt.timeIntervalSince1970) \($0.activityId) \($0.runId ?? -1) \($0.stored) "
                + "\($0.finishedAt?.timeIntervalSince1970 ?? -1) \($0.offsetMinutes ?? -1)"
        }.sorted()
    }
}
