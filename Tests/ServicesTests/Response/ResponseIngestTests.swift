import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// The one statement every submitted response goes through: a MyStudies app's (known by its
/// app token) and a schema app's (known by the id its phone made), sent together, each
/// admitted by its own rule.
@Suite(.needsCluster) struct ResponseIngestTests {
    @Test func bothSendersGoThroughOneStatementEachAdmittedByItsOwnRule() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let logger = Logger(label: "test")
            let tokens = try await h.tokens(2, study: "MYTESTSTUDY")
            var appTokens: [String] = []
            for token in tokens {
                let (_, body, _) = try await h.call(
                    "mobileappstudy-enroll.api", json: ["studyId": "MYTESTSTUDY", "token": token, "allowDataSharing": "true"])
                appTokens.append(try #require(body["data"]?["appToken"]?.text))
            }
            // One app participant withdraws (keeping their data); two schema participants, one of
            // whom withdrew by their log.
            try await h.sql("UPDATE participants SET status = 'withdrawn' WHERE app_token_hash = \(SecureToken.hash(appTokens[1]))")
            try await h.sql(
                """
                INSERT INTO participants (study_key, external_id, status, allow_data_sharing)
                VALUES ('MYTESTSTUDY', 'phone-a', 'enrolled', 'NA'), ('MYTESTSTUDY', 'phone-b', 'withdrawn', 'NA')
                """)
            let ingest = ResponseIngest(client: h.postgres, stored: WakeSignal(), logger: logger)
            func row(_ sender: ResponseIngest.Row.Sender, answers: String = #"{"q":1}"#, key: String? = nil) -> ResponseIngest.Row {
                ResponseIngest.Row(
                    sender: sender, activityId: "NewSurvey", activityVersion: "1", metadata: "{}", data: answers, replayKey: key)
            }
            let rows = [
                row(.appToken(hash: SecureToken.hash(appTokens[0]))),
                row(.appToken(hash: SecureToken.hash(appTokens[1]))),
                row(.appToken(hash: SecureToken.hash("no such token"))),
                row(.external(studyKey: "MYTESTSTUDY", id: "phone-a"), key: "post-1"),
                row(.external(studyKey: "MYTESTSTUDY", id: "phone-b"), key: "post-2"),
                row(.external(studyKey: "MYTESTSTUDY", id: "phone-new"), key: "post-3"),
                // The same POST again in the same batch, and the same answers re-ordered.
                row(.external(studyKey: "MYTESTSTUDY", id: "phone-a"), answers: #"{"q":2}"#, key: "post-1"),
                row(.appToken(hash: SecureToken.hash(appTokens[0])), answers: #"{ "q" : 1 }"#),
            ]
            let outcomes = try await withThrowingTaskGroup(of: (Int, ResponseIngest.Outcome).self) { group in
                for (index, row) in rows.enumerated() { group.addTask { (index, try await ingest.store(row)) } }
                return try await group.reduce(into: [Int: ResponseIngest.Outcome]()) { $0[$1.0] = $1.1 }
            }
            try #require(outcomes.count == rows.count)
            // Of a response sent twice at once, whichever reaches the statement first is stored
            // and the other is its replay: the tasks may run in either order.
            func storedOnce(_ first: Int, _ second: Int) -> Int64? {
                switch (outcomes[first], outcomes[second]) {
                case (.stored(true, let one), .stored(false, let other)) where one == other: one
                case (.stored(false, let one), .stored(true, let other)) where one == other: one
                default: nil
                }
            }
            guard let appParticipant = storedOnce(0, 7), let phoneA = storedOnce(3, 6), case .stored(true, let phoneB) = outcomes[4]
            else {
                Issue.record("not stored once each: \(outcomes.sorted { $0.key < $1.key })")
                return
            }
            #expect(outcomes[1] == .withdrawn)
            #expect(outcomes[2] == .unknownParticipant)
            // Not known yet: the schema receiver makes them in a transaction of its own.
            #expect(outcomes[5] == .unknownParticipant)
            #expect(Set([appParticipant, phoneA, phoneB]).count == 3)
            #expect(try await h.postgres.count(rowsOf: "responses") == 3)
            let keys = try await h.postgres.query(
                "SELECT fingerprint FROM responses WHERE participant_id = \(phoneA)", logger: logger
            ).decode(String.self).collect()
            #expect(keys == ["post-1"])

            // A study that stops collecting takes neither.
            try await h.sql("UPDATE studies SET collection_enabled = false WHERE study_key = 'MYTESTSTUDY'")
            #expect(try await ingest.store(row(.appToken(hash: SecureToken.hash(appTokens[0])), answers: "{}"))
                == .collectionDisabled(studyKey: "MYTESTSTUDY"))
            #expect(try await ingest.store(row(.external(studyKey: "MYTESTSTUDY", id: "phone-a"), key: "post-9"))
                == .collectionDisabled(studyKey: "MYTESTSTUDY"))
            #expect(try await h.postgres.count(rowsOf: "responses") == 3)
        }
    }

    /// A schema app participant's first POST: made and stored by the same statement in one
    /// transaction, a replay stored once; a study that stopped collecting keeps neither the
    /// participant nor the response, and says why.
    @Test func aFirstPostEnrolsItsSenderWithItsResponseOrNeither() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let logger = Logger(label: "test")
            let ingest = ResponseIngest(client: h.postgres, stored: WakeSignal(), logger: logger)
            let store = SchemaPostStore(
                client: h.postgres, ingest: ingest, audit: AuditLog(client: h.postgres, logger: logger), logger: logger)
            func post(_ id: String, key: String) -> SchemaEnrollingPost {
                SchemaEnrollingPost(
                    studyKey: "MYTESTSTUDY", externalId: id,
                    reception: SchemaReception(activityId: "NewSurvey", activityVersion: "1", metadata: "{}", data: #"{"q":1}"#),
                    dedupKey: key, statusAfter: nil, arms: nil)
            }
            guard case .stored(true, let participant) = try await store.storeEnrolling(post("phone-new", key: "post-1")) else {
                Issue.record("the first POST was not stored")
                return
            }
            #expect(try await store.storeEnrolling(post("phone-new", key: "post-1")) == .stored(new: false, participantId: participant))
            #expect(try await h.postgres.count(rowsOf: "responses") == 1)
            #expect(try await h.postgres.count(rowsOf: "participants") == 1)

            try await h.sql("UPDATE studies SET collection_enabled = false WHERE study_key = 'MYTESTSTUDY'")
            #expect(try await store.storeEnrolling(post("phone-late", key: "post-2")) == .collectionDisabled(studyKey: "MYTESTSTUDY"))
            #expect(try await h.postgres.count(rowsOf: "responses") == 1)
            #expect(try await h.postgres.count(rowsOf: "participants") == 1, "the enrolment is rolled back with the response")
        }
    }
}
