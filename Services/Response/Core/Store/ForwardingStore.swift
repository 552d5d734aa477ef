import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Forwarding settings per study (the Basic password sealed at rest) and the forwarding queue:
/// processed responses of studies that forward, leased by one worker at a time.
package struct ForwardingStore: Sendable {
    /// A study's settings as stored, with when they last changed (OAuth tokens are cached per
    /// version of the settings).
    package struct Settings: Sendable, Equatable {
        package var target: ForwardingTarget
        package var format: ForwardingFormat
        package var updatedBy: String
        package var updatedAt: Date
    }

    /// One response leased for sending.
    package struct Lease: Sendable {
        package var responseId: Int64
        package var studyKey: String
        package var participantId: Int64
        package var activityId: String
        package var version: String
        package var data: JSONValue
        package var attempts: Int
    }

    /// How forwarding stands for a study, for the admin API.
    package typealias Status = ForwardingView.Status

    package let client: PostgresClient
    package let sealKey: SymmetricKey
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, encryptionKey: Data, audit: AuditLog, logger: Logger) {
        sealKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack-response-forwarding".utf8),
            outputByteCount: 32)
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    package func settings(studyKey: String) async throws -> Settings? {
        let rows = try await client.query(
            """
            SELECT kind, url, username, sealed_password, token_request_url, token_field, token_header, updated_by, updated_at, format
            FROM forwarding_settings WHERE study_key = \(studyKey)
            """, logger: logger)
        for try await (kind, url, username, sealed, tokenURL, field, header, by, at, format) in rows.decode(
            (String, String?, String?, ByteBuffer?, String?, String?, String?, String, Date, String).self)
        {
            let target: ForwardingTarget
            switch kind {
            case "basic":
                guard let url = url.flatMap(URL.init(string:)), let username, let sealed else { return nil }
                let box = try AES.GCM.SealedBox(combined: Data(buffer: sealed))
                let password = try AES.GCM.open(box, using: sealKey, authenticating: Data(studyKey.utf8))
                target = .basic(url: url, username: username, password: String(decoding: password, as: UTF8.self))
            case "oauth":
                guard let tokenURL = tokenURL.flatMap(URL.init(string:)), let field, let header,
                    let url = url.flatMap(URL.init(string:))
                else { return nil }
                target = .oauth(tokenRequestURL: tokenURL, tokenField: field, header: header, url: url)
            default:
                target = .disabled
            }
            return Settings(target: target, format: ForwardingFormat(rawValue: format) ?? .json, updatedBy: by, updatedAt: at)
        }
        return nil
    }

    /// Stores the study's target and what is sent to it (audited, without the password).
    package func save(_ target: ForwardingTarget, format: ForwardingFormat = .json, studyKey: String, actor: String) async throws {
        var url: String?
        var username: String?
        var sealed: ByteBuffer?
        var tokenURL: String?
        var field: String?
        var header: String?
        switch target {
        case .disabled:
            break
        case .basic(let endpoint, let user, let password):
            url = endpoint.absoluteString
            username = user
            let box = try AES.GCM.seal(Data(password.utf8), using: sealKey, authenticating: Data(studyKey.utf8))
            sealed = ByteBuffer(bytes: try box.storedBytes)
        case .oauth(let tokenRequestURL, let tokenField, let tokenHeader, let endpoint):
            tokenURL = tokenRequestURL.absoluteString
            field = tokenField
            header = tokenHeader
            url = endpoint.absoluteString
        }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO forwarding_settings (study_key, kind, url, username, sealed_password, token_request_url,
                                                 token_field, token_header, format, updated_by, updated_at)
                VALUES (\(studyKey), \(target.kind), \(url), \(username), \(sealed), \(tokenURL), \(field), \(header),
                        \(format.rawValue), \(actor), clock_timestamp())
                ON CONFLICT (study_key) DO UPDATE SET kind = excluded.kind, url = excluded.url, username = excluded.username,
                    sealed_password = excluded.sealed_password, token_request_url = excluded.token_request_url,
                    token_field = excluded.token_field, token_header = excluded.token_header, format = excluded.format,
                    updated_by = excluded.updated_by, updated_at = excluded.updated_at
                """, logger: logger)
            try await audit.record(
                actor: actor, action: "forwarding.updated", studyId: studyKey,
                details: ["type": target.kind, "format": format.rawValue, "url": url ?? "", "tokenRequestURL": tokenURL ?? ""],
                on: connection)
        }
    }

    /// Leases up to `limit` of the oldest due processed responses of studies that forward.
    ///
    /// Read from the studies that forward, each an index range of its own responses: the
    /// processed responses of studies that do not forward (most of them, and all kept for good)
    /// are never walked. Read from the responses, every poll of every replica walked them all,
    /// and a large backlog made each poll take time from processing.
    package func lease(limit: Int, for lease: Duration) async throws -> [Lease] {
        let rows = try await client.query(
            """
            UPDATE responses SET forward_lease_until = now() + make_interval(secs => \(lease.inSeconds))
            WHERE id IN (
                SELECT due.id FROM forwarding_settings f CROSS JOIN LATERAL (
                    SELECT r.id, r.forward_due_at FROM responses r
                    WHERE r.study_key = f.study_key AND r.status = 'processed' AND r.forward_due_at <= now()
                      AND (r.forward_lease_until IS NULL OR r.forward_lease_until < now())
                    ORDER BY r.forward_due_at, r.id LIMIT \(limit)
                    FOR UPDATE OF r SKIP LOCKED
                ) due
                WHERE f.kind <> 'disabled'
                ORDER BY due.forward_due_at, due.id LIMIT \(limit))
            RETURNING id, study_key, (SELECT p.number FROM participants p WHERE p.id = responses.participant_id), activity_id,
                activity_version, data::text, forward_attempts
            """, logger: logger)
        var leased: [Lease] = []
        for try await (id, study, participant, activity, version, data, attempts) in rows.decode(
            (Int64, String, Int64, String, String, String, Int).self)
        {
            leased.append(Lease(
                responseId: id, studyKey: study, participantId: participant, activityId: activity, version: version,
                data: try JSONValue.parse(data.utf8, budget: .responseAnswers), attempts: attempts))
        }
        return leased.sorted { $0.responseId < $1.responseId }
    }

    /// The target answered 2xx: the response is `forwarded`, and never sent again.
    package func markForwarded(_ lease: Lease) async throws {
        try await client.query(
            """
            UPDATE responses SET status = 'forwarded', forwarded_at = now(), forward_lease_until = NULL, forward_error = NULL
            WHERE id = \(lease.responseId) AND status = 'processed'
            """, logger: logger)
    }

    /// The send failed: tried again after `wait`, with the reason kept for the admin API.
    package func markFailed(_ lease: Lease, error: String, wait: Duration) async throws {
        try await client.query(
            """
            UPDATE responses SET forward_attempts = forward_attempts + 1, forward_error = \(String(error.prefix(1000))),
                forward_due_at = now() + make_interval(secs => \(wait.inSeconds)), forward_lease_until = NULL
            WHERE id = \(lease.responseId) AND status = 'processed'
            """, logger: logger)
    }

    /// Whether the FHIR server at `target` took the study's questionnaire version already.
    package func questionnaireForwarded(studyKey: String, activityId: String, version: String, target: String) async throws -> Bool {
        let rows = try await client.query(
            """
            SELECT 1 FROM fhir_forwarded_questionnaires
            WHERE study_key = \(studyKey) AND activity_id = \(activityId) AND version = \(version) AND target = \(target)
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The FHIR server at `target` took the questionnaire version: it is not sent there again.
    package func markQuestionnaireForwarded(studyKey: String, activityId: String, version: String, target: String) async throws {
        try await client.query(
            """
            INSERT INTO fhir_forwarded_questionnaires (study_key, activity_id, version, target)
            VALUES (\(studyKey), \(activityId), \(version), \(target)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    package func status(studyKey: String) async throws -> Status {
        let rows = try await client.query(
            """
            SELECT count(*) FILTER (WHERE status = 'processed'),
                   count(*) FILTER (WHERE status = 'processed' AND forward_attempts > 0),
                   count(*) FILTER (WHERE status = 'forwarded'),
                   max(forwarded_at),
                   (SELECT forward_error FROM responses
                    WHERE study_key = \(studyKey) AND status = 'processed' AND forward_error IS NOT NULL
                    ORDER BY forward_due_at DESC LIMIT 1)
            FROM responses WHERE study_key = \(studyKey)
            """, logger: logger)
        for try await (waiting, failing, forwarded, last, error) in rows.decode((Int, Int, Int, Date?, String?).self) {
            return Status(waiting: waiting, failing: failing, forwarded: forwarded, lastForwardedAt: last, lastError: error)
        }
        return Status(waiting: 0, failing: 0, forwarded: 0)
    }
}
