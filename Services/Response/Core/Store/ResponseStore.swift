import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Submitted responses and the participants they come from.
package struct ResponseStore: Sendable {
    /// The participant an app token stands for.
    package struct Participant: Sendable, Equatable {
        package var id: Int64
        package var studyKey: String
        package var studyId: String
        package var withdrawn: Bool
        package var collectionEnabled: Bool

        package init(id: Int64, studyKey: String, studyId: String, withdrawn: Bool, collectionEnabled: Bool) {
            self.id = id
            self.studyKey = studyKey
            self.studyId = studyId
            self.withdrawn = withdrawn
            self.collectionEnabled = collectionEnabled
        }
    }

    package let client: PostgresClient
    /// Whether a pooler in transaction mode stands between: no named prepared statements then.
    package let pooling: DatabaseSettings.Pooling
    package let ingest: ResponseIngest
    package let audit: AuditLog
    package let logger: Logger

    package init(
        client: PostgresClient, audit: AuditLog, stored: WakeSignal = WakeSignal(), pooling: DatabaseSettings.Pooling = .session,
        logger: Logger
    ) {
        self.client = client
        self.pooling = pooling
        ingest = ResponseIngest(client: client, stored: stored, pooling: pooling, logger: logger)
        self.audit = audit
        self.logger = logger
    }

    package func participant(appToken: String) async throws -> Participant? {
        try await participant(appTokenHash: SecureToken.hash(appToken))
    }

    package func participant(appTokenHash: String) async throws -> Participant? {
        let rows = try await client.run(ParticipantStatement(appTokenHash: appTokenHash), pooling: pooling, logger: logger)
        for try await (id, key, studyId, withdrawn, enabled) in rows {
            return Participant(id: id, studyKey: key, studyId: studyId, withdrawn: withdrawn, collectionEnabled: enabled)
        }
        return nil
    }

    /// Every app call looks its participant up, so the lookup is prepared once per connection.
    package struct ParticipantStatement: PostgresPreparedStatement {
        package static let sql = """
            SELECT p.id, p.study_key, s.study_id, p.status = 'withdrawn', s.collection_enabled
            FROM participants p JOIN studies s ON s.study_key = p.study_key
            WHERE p.app_token_hash = $1
            """
        package static let bindingDataTypes: [PostgresDataType] = [.text]
        package typealias Row = (Int64, String, String, Bool, Bool)

        package var appTokenHash: String

        package func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(appTokenHash)
            return bindings
        }

        package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Stores the response (committed when this returns `.stored`, possibly in one commit with
    /// others submitted at the same moment); a replay of one already stored is recognised and
    /// stores nothing.
    package func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome {
        try await ingest.store(row)
    }

    /// `withdrawFromStudy`: the participant is marked withdrawn and their app token stops working.
    /// With `delete`, their rows in the study's tables, their responses and their enrollment token go too (the token then reports
    /// `Unknown token`); without it everything stays and the token reports `Token already in use`.
    /// False when no participant has the app token.
    package func withdraw(appToken: String, delete: Bool) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE participants SET status = 'withdrawn', withdrawn_at = now(), app_token_hash = NULL
                WHERE app_token_hash = \(SecureToken.hash(appToken))
                RETURNING id, study_key
                """, logger: logger)
            var found: (Int64, String)?
            for try await row in rows.decode((Int64, String).self) { found = row }
            guard let (participantId, studyKey) = found else { return false }
            if delete {
                // With their data goes what linked their number to the person.
                try await connection.query(
                    "UPDATE participants SET enrolled_token_sha256 = NULL WHERE id = \(participantId)", logger: logger)
                try await Self.deleteData(of: [participantId], studyKey: studyKey, on: connection, logger: logger)
                try await connection.query(
                    "DELETE FROM enrollment_tokens WHERE participant_id = \(participantId)", logger: logger)
            }
            try await audit.record(
                actor: "participant:\(participantId)", action: delete ? "participant.withdrawn_deleted" : "participant.withdrawn",
                studyId: studyKey, on: connection)
            return true
        }
    }

    /// Deletes what the participants recorded in the study: their rows in every table of the
    /// study (children first: newer lists first), their Sage archives and uploads, then the raw
    /// responses (their timing rows go with them). Their participant rows and tokens stay.
    package static func deleteData(
        of participantIds: [Int64], studyKey: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !participantIds.isEmpty else { return }
        var tables: [String] = []
        for try await (schema, table) in try await connection.query(
            """
            SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
            WHERE l.study_key = \(studyKey) ORDER BY l.id DESC
            """, logger: logger
        ).decode((String, String).self) { tables.append("\(SQLName.quoted(schema)).\(SQLName.quoted(table))") }
        // The tables name participants by their number in the study.
        var numbers: [Int64] = []
        for try await number in try await connection.query(
            "SELECT number FROM participants WHERE id = ANY(\(participantIds)) AND study_key = \(studyKey)", logger: logger
        ).decode(Int64.self) { numbers.append(number) }
        var binds = PostgresBindings()
        binds.append(numbers)
        for table in tables {
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \"ParticipantId\" = ANY($1)", binds: binds),
                logger: logger)
        }
        try await connection.query("DELETE FROM sage_archives WHERE participant_id = ANY(\(participantIds))", logger: logger)
        try await connection.query("DELETE FROM sage_refused_archives WHERE participant_id = ANY(\(participantIds))", logger: logger)
        try await connection.query("DELETE FROM sage_uploads WHERE participant_id = ANY(\(participantIds))", logger: logger)
        try await connection.query("DELETE FROM responses WHERE participant_id = ANY(\(participantIds))", logger: logger)
    }
}
