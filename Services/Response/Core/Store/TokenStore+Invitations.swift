import Crypto
import Foundation
import PostgresNIO
import ServiceKit
import StudyModels

/// The tokens of registration's invitations: one per invitation, in batches of their own kind,
/// each with an expiry, refused once revoked.
extension TokenStore {
    /// Makes a token for each invitation that has none and gives those whose token is still open
    /// (unused, not revoked) their new expiry, in one transaction; answers every open
    /// invitation's token. An invitation whose token was used or revoked is left out.
    package func issueInvitationTokens(
        studyKey: String, _ invitations: [InvitationTokenRequest.Invitation], createdBy: String
    ) async throws -> [UUID: String] {
        var generator = SystemRandomNumberGenerator()
        return try await client.withTransaction(logger: logger) { connection -> [UUID: String] in
            let ids = invitations.map(\.invitationId)
            var issued: [UUID: String] = [:]
            var known = Set<UUID>()
            let rows = try await connection.query(
                """
                SELECT t.invitation_id, t.sealed, t.participant_id IS NULL AND t.revoked_at IS NULL
                FROM enrollment_tokens t JOIN token_batches b ON b.id = t.batch_id
                WHERE b.study_key = \(studyKey) AND t.invitation_id = ANY(\(ids)::uuid[])
                FOR UPDATE OF t
                """, logger: logger)
            for try await (id, sealed, open) in rows.decode((UUID, ByteBuffer, Bool).self) {
                known.insert(id)
                if open { issued[id] = try unseal(sealed) }
            }
            let renewed = invitations.filter { issued[$0.invitationId] != nil }
            if !renewed.isEmpty {
                try await connection.query(
                    """
                    UPDATE enrollment_tokens t SET expires_at = r.expires
                    FROM unnest(\(renewed.map(\.invitationId))::uuid[], \(renewed.map(\.expiresAt))::timestamptz[]) AS r (id, expires)
                    WHERE t.invitation_id = r.id
                    """, logger: logger)
            }
            var pending = invitations.filter { !known.contains($0.invitationId) }
            guard !pending.isEmpty else { return issued }
            let batchId = UUID()
            try await connection.query(
                """
                INSERT INTO token_batches (id, study_key, count, created_by, kind, testing)
                VALUES (\(batchId), \(studyKey), \(pending.count), \(createdBy), 'invitations',
                        (SELECT coalesce(bool_or(status = 'testing'), false) FROM studies WHERE study_key = \(studyKey)))
                """, logger: logger)
            var position = 0
            // A token that collides with one already stored is replaced until every invitation has one.
            while !pending.isEmpty {
                var tokens: [UUID: String] = [:]
                var hmacs: [String] = []
                var sealed: [String] = []
                var positions: [Int] = []
                for invitation in pending {
                    let token = EnrollmentToken.generate(using: &generator)
                    tokens[invitation.invitationId] = token
                    hmacs.append(hmac(token))
                    sealed.append(try AES.GCM.seal(Data(token.utf8), using: sealKey).storedBytes.base64EncodedString())
                    positions.append(position)
                    position += 1
                }
                let inserted = try await connection.query(
                    """
                    INSERT INTO enrollment_tokens (token_hmac, batch_id, position, sealed, invitation_id, expires_at)
                    SELECT h, \(batchId), p, decode(s, 'base64'), i, e
                    FROM unnest(\(hmacs)::text[], \(positions)::int[], \(sealed)::text[], \(pending.map(\.invitationId))::uuid[],
                                \(pending.map(\.expiresAt))::timestamptz[]) AS t (h, p, s, i, e)
                    ON CONFLICT (token_hmac) DO NOTHING
                    RETURNING invitation_id
                    """, logger: logger)
                var done = Set<UUID>()
                for try await id in inserted.decode(UUID.self) {
                    done.insert(id)
                    issued[id] = tokens[id]
                }
                pending.removeAll { done.contains($0.invitationId) }
            }
            try await audit.record(
                actor: createdBy, action: "tokens.invitations_issued", studyId: studyKey,
                details: ["batchId": batchId.uuidString.lowercased(), "count": String(position)], on: connection)
            return issued
        }
    }

    /// Invitations moved in from a MyStudies deployment, each with the token its e-mail holds
    /// (docs/moving-in.md). One spent at the source is spent here by the moved participant whose
    /// participant id hashes to `usedBy`; one already here (by its id, or a token another holds)
    /// is left as it is, so a repeated import changes nothing.
    package func moveInInvitationTokens(studyKey: String, _ moved: MovedInvitationTokens) async throws -> MovedParticipantsReply {
        try await client.withTransaction(logger: logger) { connection -> MovedParticipantsReply in
            let ids = moved.invitations.map(\.invitationId)
            let hmacs = moved.invitations.map { hmac($0.token) }
            let known = try await connection.query(
                "SELECT invitation_id, token_hmac FROM enrollment_tokens WHERE invitation_id = ANY(\(ids)::uuid[]) OR token_hmac = ANY(\(hmacs))",
                logger: logger)
            var taken = Set<String>()
            var takenIds = Set<UUID>()
            for try await (id, token) in known.decode((UUID?, String).self) {
                taken.insert(token)
                if let id { takenIds.insert(id) }
            }
            let fresh = moved.invitations.filter { !takenIds.contains($0.invitationId) && !taken.contains(hmac($0.token)) }
            guard !fresh.isEmpty else { return MovedParticipantsReply(created: 0, existing: moved.invitations.count) }
            let batchId = UUID()
            try await connection.query(
                """
                INSERT INTO token_batches (id, study_key, count, created_by, kind, testing)
                VALUES (\(batchId), \(studyKey), \(fresh.count), \(moved.movedBy), 'invitations', false)
                """, logger: logger)
            for (position, invitation) in fresh.enumerated() {
                let sealed = ByteBuffer(bytes: try AES.GCM.seal(Data(invitation.token.utf8), using: sealKey).storedBytes)
                try await connection.query(
                    """
                    INSERT INTO enrollment_tokens (token_hmac, batch_id, position, sealed, invitation_id, expires_at, revoked_at, participant_id, used_at)
                    VALUES (\(hmac(invitation.token)), \(batchId), \(position), \(sealed), \(invitation.invitationId), \(invitation.expiresAt),
                        \(invitation.revokedAt),
                        (SELECT id FROM participants WHERE study_key = \(studyKey) AND enrolled_token_sha256 = \(invitation.usedBy)
                            AND NOT EXISTS (SELECT 1 FROM enrollment_tokens u WHERE u.participant_id = participants.id) LIMIT 1),
                        \(invitation.usedBy == nil ? nil : invitation.usedAt ?? invitation.expiresAt))
                    """, logger: logger)
            }
            try await audit.record(
                actor: moved.movedBy, action: "tokens.invitations_moved_in", studyId: studyKey,
                details: ["batchId": batchId.uuidString.lowercased(), "count": String(fresh.count)], on: connection)
            return MovedParticipantsReply(created: fresh.count, existing: moved.invitations.count - fresh.count)
        }
    }

    /// Refuses the invitations' tokens from now on; those already spent are answered as used.
    package func revokeInvitationTokens(studyKey: String, _ ids: [UUID]) async throws -> InvitationRevocationReply {
        try await client.withTransaction(logger: logger) { connection -> InvitationRevocationReply in
            let rows = try await connection.query(
                """
                UPDATE enrollment_tokens t SET revoked_at = coalesce(t.revoked_at, now())
                FROM token_batches b
                WHERE b.id = t.batch_id AND b.study_key = \(studyKey) AND t.invitation_id = ANY(\(ids)::uuid[])
                  AND t.participant_id IS NULL
                RETURNING t.invitation_id
                """, logger: logger)
            var revoked: [UUID] = []
            for try await id in rows.decode(UUID.self) { revoked.append(id) }
            let usedRows = try await connection.query(
                """
                SELECT t.invitation_id FROM enrollment_tokens t JOIN token_batches b ON b.id = t.batch_id
                WHERE b.study_key = \(studyKey) AND t.invitation_id = ANY(\(ids)::uuid[]) AND t.participant_id IS NOT NULL
                """, logger: logger)
            var used: [UUID] = []
            for try await id in usedRows.decode(UUID.self) { used.append(id) }
            if !revoked.isEmpty {
                try await audit.record(
                    actor: "registration-service", action: "tokens.invitations_revoked", studyId: studyKey,
                    details: ["count": String(revoked.count)], on: connection)
            }
            return InvitationRevocationReply(revoked: revoked, used: used)
        }
    }

    /// Removes unused invitation tokens (an invitation that was refused after they were made).
    package func discardInvitationTokens(studyKey: String, _ ids: [UUID]) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                DELETE FROM enrollment_tokens t USING token_batches b
                WHERE b.id = t.batch_id AND b.study_key = \(studyKey) AND t.invitation_id = ANY(\(ids)::uuid[])
                  AND t.participant_id IS NULL
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM token_batches b WHERE b.study_key = \(studyKey) AND b.kind = 'invitations'
                  AND NOT EXISTS (SELECT 1 FROM enrollment_tokens t WHERE t.batch_id = b.id)
                """, logger: logger)
        }
    }

    func unseal(_ sealed: ByteBuffer) throws -> String {
        String(decoding: try AES.GCM.open(try AES.GCM.SealedBox(combined: Data(buffer: sealed)), using: sealKey), as: UTF8.self)
    }
}
