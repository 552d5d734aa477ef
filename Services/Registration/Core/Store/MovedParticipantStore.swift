import Foundation
import JSONText
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// Accounts moved in from a MyStudies deployment (docs/moving-in.md): each written whole, in one
/// transaction, with its study states, signatures and activity states, and the row that says it
/// came over.
package struct MovedParticipantStore: Sendable {
    /// One account as the import writes it: the plan's account with what was worked out before
    /// the transaction (the password's hash here, and where each signed PDF was stored).
    package struct Account: Sendable {
        package var plan: MyStudiesParticipantPlan.Account
        package var passwordHash: String
        package var passwordChangedAt: Date
        /// By the signature's id at the source.
        package var storedPDFs: [ScalarKey: StoredPDF]

        package init(plan: MyStudiesParticipantPlan.Account, passwordHash: String, passwordChangedAt: Date, storedPDFs: [ScalarKey: StoredPDF]) {
            self.plan = plan
            self.passwordHash = passwordHash
            self.passwordChangedAt = passwordChangedAt
            self.storedPDFs = storedPDFs
        }
    }

    package struct StoredPDF: Sendable {
        package var key: String
        package var sha256: String
        package var bytes: Int

        package init(key: String, sha256: String, bytes: Int) {
            self.key = key
            self.sha256 = sha256
            self.bytes = bytes
        }
    }

    package enum Outcome: Sendable, Equatable {
        case created(UUID)
        /// Another run moved it in meanwhile.
        case alreadyImported
        /// An account of the same e-mail address is here.
        case taken
    }

    package let client: PostgresClient
    /// Seals each study's participant id, as `StudyStateStore` does.
    package let seal: RowSeal
    /// Seals each invitation's token, as `InvitationStore` does.
    package let invitationSeal: RowSeal
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, seal: RowSeal, invitationSeal: RowSeal, audit: AuditLog, logger: Logger) {
        self.client = client
        self.seal = seal
        self.invitationSeal = invitationSeal
        self.audit = audit
        self.logger = logger
    }

    /// Which of `sourceUserIds` an earlier run moved in.
    package func moved(appId: String, sourceUserIds: [String]) async throws -> Set<ScalarKey> {
        guard !sourceUserIds.isEmpty else { return [] }
        let rows = try await client.query(
            "SELECT source_user_id FROM moved_in_accounts WHERE app_id = \(appId) AND source_user_id = ANY(\(sourceUserIds))", logger: logger)
        var found: Set<ScalarKey> = []
        for try await id in rows.decode(String.self) { found.insert(ScalarKey(id)) }
        return found
    }

    /// Which of the addresses' keys (`EmailKey`) have an account here in the app.
    package func takenEmailKeys(appId: String, orgId: String, keys: [String]) async throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        let rows = try await client.query(
            "SELECT email_key FROM participants WHERE app_id = \(appId) AND org_id = \(orgId) AND email_key = ANY(\(keys))", logger: logger)
        var found: Set<String> = []
        for try await key in rows.decode(String.self) { found.insert(key) }
        return found
    }

    /// Writes the account and all it holds, or nothing.
    package func insert(_ account: Account, appId: String, orgId: String, source: String, actor: String, now: Date = Date()) async throws -> Outcome {
        do {
            return try await insertOnce(account, appId: appId, orgId: orgId, source: source, actor: actor, now: now)
        } catch let error as PostgresTransactionError where error.closureError is Taken {
            return .taken
        } catch is Taken {
            return .taken
        }
    }

    private func insertOnce(_ account: Account, appId: String, orgId: String, source: String, actor: String, now: Date) async throws -> Outcome {
        let plan = account.plan
        let userId = UUID()
        return try await client.withTransaction(logger: logger) { connection -> Outcome in
            let claimed = try await connection.query(
                """
                INSERT INTO moved_in_accounts (app_id, source_user_id, user_id, source) VALUES (\(appId), \(plan.sourceUserId), NULL, \(source))
                ON CONFLICT (app_id, source_user_id) DO NOTHING RETURNING 1
                """, logger: logger)
            var isNew = false
            for try await _ in claimed { isNew = true }
            guard isNew else { return .alreadyImported }
            let settings = String(decoding: try JSONEncoder().encode(plan.settings), as: UTF8.self)
            let created = try await connection.query(
                """
                INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, password_changed_at, verified, settings,
                    created_at, disabled_at)
                VALUES (\(userId), \(appId), \(orgId), \(plan.email), \(EmailKey.of(plan.email)), \(account.passwordHash),
                    \(account.passwordChangedAt), \(plan.verified), \(settings)::jsonb, \(plan.createdAt ?? now), \(plan.disabled ? now : nil))
                ON CONFLICT (app_id, org_id, email_key) DO NOTHING RETURNING 1
                """, logger: logger)
            var inserted = false
            for try await _ in created { inserted = true }
            guard inserted else { throw Taken() }
            try await connection.query(
                "UPDATE moved_in_accounts SET user_id = \(userId) WHERE app_id = \(appId) AND source_user_id = \(plan.sourceUserId)", logger: logger)
            if case .carried = plan.password {
                try await connection.query(
                    "INSERT INTO password_history (user_id, password_hash) VALUES (\(userId), \(account.passwordHash))", logger: logger)
            }
            for study in plan.studies {
                try await insert(study, userId: userId, appId: appId, storedPDFs: account.storedPDFs, now: now, on: connection)
            }
            var details = ["studies": String(plan.studies.count), "password": { if case .carried = plan.password { "carried" } else { "reset" } }()]
            if plan.disabled { details["disabled"] = "true" }
            try await audit.record(actor: actor, action: "participant.moved_in", details: details.merging(["userId": userId.uuidString.lowercased()]) { $1 }, on: connection)
            return .created(userId)
        }
    }

    private func insert(
        _ study: MyStudiesParticipantPlan.StudyState, userId: UUID, appId: String, storedPDFs: [ScalarKey: StoredPDF], now: Date,
        on connection: PostgresConnection
    ) async throws {
        let sealed = try study.participantId.map { ByteBuffer(bytes: try seal.seal($0, row: userId, studyId: study.studyId)) }
        let site = study.sourceSiteId.map { MovedIds.site(appId: appId, studyId: study.studyId, sourceId: $0) }
        let tokenHash = study.participantId.map(InvitationStore.participantTokenHash)
        try await connection.query(
            """
            INSERT INTO participant_studies (user_id, study_id, status, participant_id_sealed, participant_token_hash, bookmarked, enrolled_at,
                withdrawn_at, completion, adherence, updated_at, site_id)
            VALUES (\(userId), \(study.studyId), \(study.status), \(sealed), \(tokenHash), \(study.bookmarked), \(study.enrolledAt),
                \(study.withdrawnAt), \(study.completion), \(study.adherence), \(now), (SELECT id FROM study_sites WHERE id = \(site)))
            """, logger: logger)
        // The invitation the enrolment spent, moved in before the accounts, is this account's.
        if let tokenHash {
            try await InvitationStore.link(userId: userId, studyId: study.studyId, participantTokenHash: tokenHash, on: connection, logger: logger)
        }
        for consent in study.consents {
            let pdf = storedPDFs[ScalarKey(consent.sourceId)]
            let signedAt = consent.signedAt ?? study.enrolledAt ?? now
            try await connection.query(
                """
                INSERT INTO consent_records (user_id, app_id, study_id, version, status, eligibility, sharing, pdf_key, pdf_sha256, pdf_bytes,
                    created_at, left_at)
                VALUES (\(userId), \(appId), \(study.studyId), \(consent.version), \(consent.status), true, \(consent.sharing), \(pdf?.key),
                    \(pdf?.sha256), \(pdf?.bytes), \(signedAt), \(study.withdrawnAt.map { max($0, signedAt) }))
                """, logger: logger)
        }
        for activity in study.activities {
            try await connection.query(
                """
                INSERT INTO participant_activities (user_id, study_id, activity_id, activity_version, activity_state, activity_run_id,
                    bookmarked, runs_total, runs_completed, runs_missed, updated_at)
                VALUES (\(userId), \(study.studyId), \(activity.activityId), \(activity.version), \(activity.state), \(activity.runId),
                    \(activity.bookmarked), \(activity.total), \(activity.completed), \(activity.missed), \(now))
                ON CONFLICT (user_id, study_id, activity_id) DO NOTHING
                """, logger: logger)
        }
    }

    // MARK: Sites and invitations

    /// Writes the sites not here yet (by their moved-in id); one whose name another site of the
    /// study has here is not written. Returns how many were written, and the names refused.
    package func insert(sites: [MyStudiesParticipantPlan.Site], appId: String, actor: String, now: Date = Date()) async throws
        -> (created: Int, refused: [MyStudiesParticipantPlan.Site])
    {
        guard !sites.isEmpty else { return (0, []) }
        return try await client.withTransaction(logger: logger) { connection in
            var created = 0
            var refused: [MyStudiesParticipantPlan.Site] = []
            for site in sites {
                let id = MovedIds.site(appId: appId, studyId: site.studyId, sourceId: site.sourceId)
                let rows = try await connection.query(
                    """
                    INSERT INTO study_sites (id, study_id, name, location, target_enrollment, created_by, created_at, decommissioned_at)
                    VALUES (\(id), \(site.studyId), \(site.name), \(site.location), \(site.targetEnrollment), \(actor), \(site.createdAt ?? now),
                        \(site.decommissioned ? now : nil))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                if inserted {
                    created += 1
                    try await audit.record(
                        actor: actor, action: "site.moved_in", studyId: site.studyId, details: ["siteId": id.uuidString.lowercased()], on: connection)
                } else if try await !siteExists(id, on: connection) {
                    refused.append(site)
                }
            }
            return (created, refused)
        }
    }

    /// Writes the invitations not here yet (by their moved-in id), each with its token sealed as
    /// an invitation's is, linked to its site and, once moved in, to its participant's account.
    /// One whose address has another open invitation to the study here is not written. Returns
    /// how many were written, and those refused.
    package func insert(invitations: [MyStudiesParticipantPlan.Invitation], appId: String, actor: String, now: Date = Date()) async throws
        -> (created: Int, refused: [MyStudiesParticipantPlan.Invitation])
    {
        guard !invitations.isEmpty else { return (0, []) }
        return try await client.withTransaction(logger: logger) { connection in
            var created = 0
            var refused: [MyStudiesParticipantPlan.Invitation] = []
            for invitation in invitations {
                let id = MovedIds.invitation(appId: appId, studyId: invitation.studyId, sourceId: invitation.sourceId)
                let site = invitation.sourceSiteId.map { MovedIds.site(appId: appId, studyId: invitation.studyId, sourceId: $0) }
                let sealed = ByteBuffer(bytes: try invitationSeal.seal(invitation.token, row: id, studyId: invitation.studyId))
                var enrolledAt: Date?
                var revokedAt: Date?
                var participant: String?
                switch invitation.state {
                case .open: break
                case .enrolled(let participantId, let at):
                    enrolledAt = at ?? invitation.lastSentAt ?? now
                    participant = InvitationStore.participantTokenHash(participantId)
                case .revoked(let at): revokedAt = at ?? now
                }
                let rows = try await connection.query(
                    """
                    INSERT INTO invitations (id, study_id, site_id, email, email_key, token_sealed, expires_at, created_by, created_at, sent_count,
                        last_sent_at, revoked_at, enrolled_at, participant_token_hash, user_id)
                    VALUES (\(id), \(invitation.studyId), (SELECT id FROM study_sites WHERE id = \(site)), \(invitation.email),
                        \(EmailKey.of(invitation.email)), \(sealed), \(invitation.expiresAt), \(actor), \(invitation.createdAt ?? now),
                        \(invitation.sentCount), \(invitation.lastSentAt ?? invitation.createdAt ?? now), \(revokedAt), \(enrolledAt), \(participant),
                        (SELECT user_id FROM participant_studies WHERE study_id = \(invitation.studyId) AND participant_token_hash = \(participant) LIMIT 1))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                if inserted {
                    created += 1
                } else if try await !invitationExists(id, on: connection) {
                    refused.append(invitation)
                }
            }
            if created > 0 {
                try await audit.record(actor: actor, action: "invitations.moved_in", details: ["count": String(created)], on: connection)
            }
            return (created, refused)
        }
    }

    private func siteExists(_ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        for try await _ in try await connection.query("SELECT 1 FROM study_sites WHERE id = \(id)", logger: logger) { return true }
        return false
    }

    private func invitationExists(_ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        for try await _ in try await connection.query("SELECT 1 FROM invitations WHERE id = \(id)", logger: logger) { return true }
        return false
    }

    /// Thrown inside the transaction so it rolls back (the claim of the source account with it).
    package struct Taken: Error {}
}
