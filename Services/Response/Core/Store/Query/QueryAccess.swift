import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What lets the participant-query role read study tables, and only its participant's rows:
/// row-level security on every study table, SELECT and schema USAGE granted to that role, and the
/// key that signs the participant scope (migration 6 explains the scheme).
///
/// The service's own role owns the tables, so the policies never restrict the service itself.
package struct QueryAccess: Sendable {
    /// The role participant queries run as; nil when none is configured (then nothing is
    /// granted, and the tables are readable by nobody but the service).
    package let readerRole: String?
    /// Signs `studystack.query_scope`; derived from the service's encryption key so replicas agree.
    package let scopeKey: SymmetricKey

    package init(readerRole: String?, encryptionKey: Data) {
        self.readerRole = readerRole
        scopeKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack participant query scope".utf8),
            outputByteCount: 32)
    }

    /// The scope setting for a participant: `<id>:<hex of SHA-256(k || SHA-256(k || id))>`, what
    /// `query_scope_participant()` recomputes.
    package func scope(participantId: Int64) -> String {
        let message = Data(String(participantId).utf8)
        let key = scopeKey.withUnsafeBytes { Data($0) }
        let inner = Data(SHA256.hash(data: key + message))
        return "\(participantId):" + SHA256.hash(data: key + inner).hexString
    }

    /// Row-level security for a new study table (run by its creator, in its transaction).
    package func protect(table: String, on connection: PostgresConnection, logger: Logger) async throws {
        for statement in Self.policyStatements(table: table) {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        if let readerRole {
            try await connection.query(
                PostgresQuery(unsafeSQL: "GRANT SELECT ON \(table) TO \(SQLName.quoted(readerRole))"), logger: logger)
        }
    }

    /// USAGE on a new study schema for the reader.
    package func grantSchema(_ schema: String, on connection: PostgresConnection, logger: Logger) async throws {
        guard let readerRole else { return }
        try await connection.query(
            PostgresQuery(unsafeSQL: "GRANT USAGE ON SCHEMA \(SQLName.quoted(schema)) TO \(SQLName.quoted(readerRole))"),
            logger: logger)
    }

    package static func policyStatements(table: String) -> [String] {
        [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
            """
            CREATE POLICY participant_rows ON \(table) FOR SELECT
            USING ("ParticipantId" = (SELECT public.query_scope_participant()))
            """,
        ]
    }

    /// At start: stores the scope key and brings every existing study table and schema up to the
    /// rules above (tables made before a reader role was configured, or under another one).
    package func prepare(client: PostgresClient, logger: Logger) async throws {
        let key = scopeKey.withUnsafeBytes { Data($0) }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('response-query-access'))", logger: logger)
            try await connection.query(
                """
                INSERT INTO query_scope_key (key) VALUES (\(key))
                ON CONFLICT (singleton) DO UPDATE SET key = excluded.key
                """, logger: logger)
            var tables: [(schema: String, table: String, policed: Bool)] = []
            for try await row in try await connection.query(
                """
                SELECT s.schema_name, l.sql_name,
                       EXISTS (SELECT 1 FROM pg_policies p
                               WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                                 AND p.policyname = 'participant_rows')
                FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
                """, logger: logger
            ).decode((String, String, Bool).self) { tables.append(row) }
            for (schema, table, policed) in tables where !policed {
                for statement in Self.policyStatements(table: "\(SQLName.quoted(schema)).\(SQLName.quoted(table))") {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            guard let readerRole else { return }
            let role = SQLName.quoted(readerRole)
            try await connection.query(
                PostgresQuery(unsafeSQL: "GRANT EXECUTE ON FUNCTION public.query_scope_participant() TO \(role)"),
                logger: logger)
            for schema in Set(tables.map(\.schema)) {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "GRANT USAGE ON SCHEMA \(SQLName.quoted(schema)) TO \(role)"), logger: logger)
                try await connection.query(
                    PostgresQuery(unsafeSQL: "GRANT SELECT ON ALL TABLES IN SCHEMA \(SQLName.quoted(schema)) TO \(role)"),
                    logger: logger)
            }
        }
    }
}
