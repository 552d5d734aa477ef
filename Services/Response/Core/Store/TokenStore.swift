import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Enrollment-token batches. A token is found by its HMAC (under a key derived from
/// `STUDYSTACK_ENCRYPTION_KEY`) and kept sealed with AES-256-GCM so the researcher can download
/// the batch again; neither form reveals a token without the key.
package struct TokenStore: Sendable {
    /// A batch as the admin API lists it (`TokenBatch`, shared with the console).
    package typealias Batch = TokenBatch

    /// One token of a batch, opened, with whether a participant has used it.
    package struct Token: Sendable, Equatable {
        package var token: String
        package var used: Bool
    }

    package let client: PostgresClient
    package let lookupKey: SymmetricKey
    package let sealKey: SymmetricKey
    package let audit: AuditLog
    package let logger: Logger

    /// Rows per INSERT while a batch is written (bounded statements, one transaction).
    package static let chunk = 10_000

    package init(client: PostgresClient, encryptionKey: Data, audit: AuditLog, logger: Logger) {
        let master = SymmetricKey(data: encryptionKey)
        lookupKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Data("studystack-response-token-lookup".utf8), outputByteCount: 32)
        sealKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Data("studystack-response-token-seal".utf8), outputByteCount: 32)
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// The lookup form of a normalised token.
    package func hmac(_ token: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: lookupKey).hexString
    }

    /// Creates a batch of `count` fresh tokens for the study in one transaction. Tokens that
    /// collide with existing ones (26^8 is small enough for that to happen in large batches) are
    /// replaced until the batch is whole.
    package func createBatch(studyKey: String, count: Int, createdBy: String) async throws -> UUID {
        let batchId = UUID()
        var generator = SystemRandomNumberGenerator()
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO token_batches (id, study_key, count, created_by, testing)
                VALUES (\(batchId), \(studyKey), \(count), \(createdBy),
                        (SELECT coalesce(bool_or(status = 'testing'), false) FROM studies WHERE study_key = \(studyKey)))
                """, logger: logger)
            var stored = 0
            // Positions only grow (a collision leaves a gap), so the download's keyset paging is exact.
            var nextPosition = 0
            while stored < count {
                let wanted = min(Self.chunk, count - stored)
                var fresh = Set<String>(minimumCapacity: wanted)
                while fresh.count < wanted { fresh.insert(EnrollmentToken.generate(using: &generator)) }
                var hmacs: [String] = []
                var sealed: [String] = []
                var positions: [Int] = []
                hmacs.reserveCapacity(wanted)
                sealed.reserveCapacity(wanted)
                positions.reserveCapacity(wanted)
                for (offset, token) in fresh.enumerated() {
                    hmacs.append(hmac(token))
                    sealed.append(try AES.GCM.seal(Data(token.utf8), using: sealKey).storedBytes.base64EncodedString())
                    positions.append(nextPosition + offset)
                }
                nextPosition += wanted
                let rows = try await connection.query(
                    """
                    INSERT INTO enrollment_tokens (token_hmac, batch_id, position, sealed)
                    SELECT h, \(batchId), p, decode(s, 'base64')
                    FROM unnest(\(hmacs)::text[], \(positions)::int[], \(sealed)::text[]) AS t (h, p, s)
                    ON CONFLICT (token_hmac) DO NOTHING
                    RETURNING 1
                    """, logger: logger)
                var inserted = 0
                for try await _ in rows { inserted += 1 }
                stored += inserted
            }
            try await audit.record(
                actor: createdBy, action: "tokens.batch_created", studyId: studyKey,
                details: ["batchId": batchId.uuidString.lowercased(), "count": String(count)], on: connection)
        }
        return batchId
    }

    package func batches(studyKey: String) async throws -> [Batch] {
        try await batches(studyKey: studyKey, only: nil)
    }

    /// The batch, when it belongs to the study.
    package func batch(_ batchId: UUID, studyKey: String) async throws -> Batch? {
        try await batches(studyKey: studyKey, only: batchId).first
    }

    private func batches(studyKey: String, only batchId: UUID?) async throws -> [Batch] {
        let rows = try await client.query(
            """
            SELECT b.id, b.count, b.created_by, b.created_at,
                   (SELECT count(*) FROM enrollment_tokens t WHERE t.batch_id = b.id AND t.participant_id IS NOT NULL)::int
            FROM token_batches b
            WHERE b.study_key = \(studyKey) AND b.kind = 'batch' AND (\(batchId)::uuid IS NULL OR b.id = \(batchId))
            ORDER BY b.created_at, b.id
            """, logger: logger)
        var batches: [Batch] = []
        for try await (id, count, by, at, used) in rows.decode((UUID, Int, String, Date, Int).self) {
            batches.append(Batch(batchId: id, count: count, used: used, createdBy: by, createdAt: at))
        }
        return batches
    }

    /// The batch's tokens in creation order, opened one page at a time and handed to `each`, so a
    /// 100,000-token download never sits in memory whole.
    package func forEachToken(in batchId: UUID, page: Int = 5_000, _ each: ([Token]) async throws -> Void) async throws {
        var after = -1
        while true {
            let rows = try await client.query(
                """
                SELECT position, sealed, participant_id IS NOT NULL FROM enrollment_tokens
                WHERE batch_id = \(batchId) AND position > \(after) ORDER BY position LIMIT \(page)
                """, logger: logger)
            var tokens: [Token] = []
            for try await (position, sealed, used) in rows.decode((Int, ByteBuffer, Bool).self) {
                tokens.append(Token(token: try unseal(sealed), used: used))
                after = position
            }
            if tokens.isEmpty { return }
            try await each(tokens)
            if tokens.count < page { return }
        }
    }

    /// The enrollment token a participant spent, unsealed (forwarded with their responses); nil
    /// when they enrolled without one.
    package func token(ofParticipant participantId: Int64) async throws -> String? {
        let rows = try await client.query(
            "SELECT sealed FROM enrollment_tokens WHERE participant_id = \(participantId)", logger: logger)
        for try await sealed in rows.decode(ByteBuffer.self) { return try unseal(sealed) }
        return nil
    }
}
