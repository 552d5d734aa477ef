import Foundation
import Logging
import NIOCore
import PostgresNIO
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// The participantId registration keeps for each study is the participant's credential at the
/// response service: it is kept sealed, and given back only to its participant.
@Suite(.needsCluster) struct AppTokenAtRestTests {
    static let appToken = String(repeating: "7f", count: 16)

    @Test func theAppTokenIsStoredSealedAndReadBack() async throws {
        try await RegistrationHarness.run { h in
            let user = try await h.signUp("sealed@example.org")
            #expect(try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "S1", "status": "inProgress", "participantId": Self.appToken]]],
                auth: user.auth, userId: user.userId
            ).status == .ok)
            var stored: [(String?, ByteBuffer?)] = []
            for try await row in try await h.postgres.query(
                "SELECT participant_id, participant_id_sealed FROM participant_studies", logger: Logger(label: "test")
            ).decode((String?, ByteBuffer?).self) { stored.append(row) }
            try #require(stored.count == 1)
            #expect(stored[0].0 == nil)
            let sealed = try #require(stored[0].1)
            #expect(!String(decoding: sealed.readableBytesView, as: UTF8.self).contains(Self.appToken))
            let state = try await h.call("studyState", method: .get, auth: user.auth, userId: user.userId)
            #expect(state.json["studies"]?.array?.first?["participantId"]?.text == Self.appToken)
        }
    }

    @Test func tokensKeptInClearByEarlierVersionsAreSealedAtStart() async throws {
        try await RegistrationHarness.run { h in
            let user = try await h.signUp("legacy@example.org")
            let userId = try #require(UUID(uuidString: user.userId))
            try await h.sql(
                """
                INSERT INTO participant_studies (user_id, study_id, status, participant_id)
                VALUES (\(userId), 'OLD', 'inProgress', \(Self.appToken))
                """)
            let logger = Logger(label: "test")
            let store = StudyStateStore(
                client: h.postgres, seal: RowSeal.appTokens(encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!),
                audit: AuditLog(client: h.postgres, logger: logger), logger: logger)
            #expect(try await store.sealLegacy() == 1)
            #expect(try await store.sealLegacy() == 0)
            var clear = -1
            for try await count in try await h.postgres.query(
                "SELECT count(*)::int FROM participant_studies WHERE participant_id IS NOT NULL", logger: logger
            ).decode(Int.self) { clear = count }
            #expect(clear == 0)
            let state = try await h.call("studyState", method: .get, auth: user.auth, userId: user.userId)
            #expect(state.json["studies"]?.array?.first?["participantId"]?.text == Self.appToken)
        }
    }
}
