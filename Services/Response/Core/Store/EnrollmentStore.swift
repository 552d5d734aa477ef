import Crypto
import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Enrolled participants. The app token the apps send as `participantId` is 128 bits from the
/// CSPRNG, shown once at enrollment and stored only as its SHA-256.
package struct EnrollmentStore: Sendable {
    /// Where a token stands, for the enrollment checks.
    package struct TokenState: Sendable, Equatable {
        package var studyKey: String
        package var used: Bool
        /// An invitation's token that was revoked, or whose time ran out.
        package var revoked: Bool
        package var expired: Bool
        /// Issued while the study was in testing: a tester's.
        package var forTesting: Bool

        package init(studyKey: String, used: Bool, revoked: Bool, expired: Bool, forTesting: Bool) {
            self.studyKey = studyKey
            self.used = used
            self.revoked = revoked
            self.expired = expired
            self.forTesting = forTesting
        }
    }

    package let client: PostgresClient
    package let tokens: TokenStore
    package let properties: ParticipantPropertyStore
    package let audit: AuditLog
    /// Tells registration when an invitation's token is spent.
    package let outbox: Outbox
    package let logger: Logger

    package init(
        client: PostgresClient, tokens: TokenStore, properties: ParticipantPropertyStore, audit: AuditLog, outbox: Outbox,
        logger: Logger
    ) {
        self.client = client
        self.tokens = tokens
        self.properties = properties
        self.audit = audit
        self.outbox = outbox
        self.logger = logger
    }

    /// 32 lower-case hex characters, as the original's app tokens.
    package static func makeAppToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.hexString
    }

    package func tokenState(_ token: String) async throws -> TokenState? {
        let rows = try await client.query(
            """
            SELECT b.study_key, t.participant_id IS NOT NULL, t.revoked_at IS NOT NULL, coalesce(t.expires_at <= now(), false),
                   b.testing
            FROM enrollment_tokens t
            JOIN token_batches b ON b.id = t.batch_id WHERE t.token_hmac = \(tokens.hmac(token))
            """, logger: logger)
        for try await (study, used, revoked, expired, testing) in rows.decode((String, Bool, Bool, Bool, Bool).self) {
            return TokenState(studyKey: study, used: used, revoked: revoked, expired: expired, forTesting: testing)
        }
        return nil
    }

    package func preEnrollment(token: String, studyKey: String) async throws -> [PreEnrollmentProperty] {
        try await properties.preEnrollment(token: token, studyKey: studyKey).map { PreEnrollmentProperty(propertyId: $0.0, value: $0.1) }
    }

    package func studyHasTokens(_ studyKey: String) async throws -> Bool {
        let rows = try await client.query("SELECT 1 FROM token_batches WHERE study_key = \(studyKey) LIMIT 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Enrolls a participant, spending `token` when given, in one transaction; returns the app
    /// token. Throws `TokenTaken` when another enrollment spent the token first (or it was
    /// revoked or ran out meanwhile). Spending an invitation's token queues the news for
    /// registration in the same transaction.
    package func enroll(study: StudyCatalog.Study, token: String?, allowDataSharing: String, language: String?) async throws -> String {
        let appToken = Self.makeAppToken()
        do {
            return try await enrollOnce(
                study: study, token: token, allowDataSharing: allowDataSharing, language: language, appToken: appToken)
        } catch let error as PostgresTransactionError where error.closureError is TokenTaken {
            throw TokenTaken()
        } catch is TokenTaken {
            throw TokenTaken()
        }
    }

    private func enrollOnce(
        study: StudyCatalog.Study, token: String?, allowDataSharing: String, language: String?, appToken: String
    ) async throws -> String {
        let studyKey = study.key
        return try await client.withTransaction(logger: logger) { connection -> String in
            let now = Date()
            let inserted = try await connection.query(
                """
                INSERT INTO participants (
                    study_key, app_token_hash, enrolled_token_sha256, status, allow_data_sharing, language, enrolled_at, testing)
                VALUES (\(studyKey), \(SecureToken.hash(appToken)), \(SecureToken.hash(appToken)), 'enrolled', \(allowDataSharing),
                        \(language), \(now), \(study.status == .testing))
                RETURNING id
                """, logger: logger)
            var participantId: Int64 = 0
            for try await id in inserted.decode(Int64.self) { participantId = id }
            if let token {
                let spent = try await connection.query(
                    """
                    UPDATE enrollment_tokens SET participant_id = \(participantId), used_at = \(now)
                    WHERE token_hmac = \(tokens.hmac(token)) AND participant_id IS NULL AND revoked_at IS NULL
                      AND (expires_at IS NULL OR expires_at > \(now))
                    RETURNING invitation_id
                    """, logger: logger)
                var taken = true
                var invitation: UUID?
                for try await id in spent.decode(UUID?.self) {
                    taken = false
                    invitation = id
                }
                if taken { throw TokenTaken() }
                if let invitation {
                    try await outbox.enqueue(
                        InternalCalls.invitationEnrollments,
                        payload: InvitationEnrollment(
                            studyId: study.studyId, invitationId: invitation, participantTokenHash: SecureToken.hash(appToken),
                            enrolledAt: now),
                        on: connection)
                }
            }
            try await properties.attach(
                participantId: participantId, tokenHMAC: token.map(tokens.hmac), studyKey: studyKey, on: connection)
            var details = ["withToken": String(token != nil), "allowDataSharing": allowDataSharing]
            if study.status == .testing { details["tester"] = "true" }
            try await audit.record(
                actor: "participant:\(participantId)", action: "participant.enrolled", studyId: studyKey, details: details,
                on: connection)
            return appToken
        }
    }

    /// Participants moved in from a MyStudies deployment (docs/moving-in.md), each by the SHA-256
    /// of the participant id their app holds: an enrolled one answers to it from now on; a
    /// withdrawn one is kept for the responses already given, as a withdrawal here leaves them.
    /// One already here (by that hash, in this study) is left as it is, so a repeated or resumed
    /// import changes nothing. One transaction, serialised per study.
    package func moveIn(study: StudyCatalog.Study, _ moved: MovedParticipants) async throws -> MovedParticipantsReply {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("moved-in:" + study.key), 0))", logger: logger)
            var created = 0
            for participant in moved.participants {
                let enrolled = participant.status == "enrolled"
                let rows = try await connection.query(
                    """
                    INSERT INTO participants (study_key, app_token_hash, enrolled_token_sha256, status, allow_data_sharing, enrolled_at,
                        withdrawn_at, testing)
                    SELECT \(study.key), \(enrolled ? participant.tokenHash : nil), \(participant.tokenHash), \(participant.status),
                        \(participant.allowDataSharing), \(participant.enrolledAt), \(participant.withdrawnAt), false
                    WHERE NOT EXISTS (SELECT 1 FROM participants WHERE study_key = \(study.key) AND enrolled_token_sha256 = \(participant.tokenHash))
                      AND NOT EXISTS (SELECT 1 FROM participants WHERE app_token_hash = \(participant.tokenHash))
                    RETURNING 1
                    """, logger: logger)
                for try await _ in rows { created += 1 }
            }
            if created > 0 {
                try await audit.record(
                    actor: moved.movedBy, action: "participants.moved_in", studyId: study.key,
                    details: ["created": String(created), "existing": String(moved.participants.count - created)], on: connection)
            }
            return MovedParticipantsReply(created: created, existing: moved.participants.count - created)
        }
    }

    /// Thrown inside the transaction so it rolls back.
    package struct TokenTaken: Error {
        package init() {}
    }
}
