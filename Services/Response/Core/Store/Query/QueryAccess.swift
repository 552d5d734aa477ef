import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What lets the query role read study tables, and only what its caller may: row-level security on
/// every study table (a participant's own rows, or the whole study for a researcher), SELECT and
/// schema USAGE granted to that role, the researchers' `mobileappstudy` views, and the key that
/// signs the scopes (migrations 6 and 12 explain the scheme).
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
        signed(String(participantId))
    }

    /// The scope setting for a researcher reading a study: `s:<study key>:<MAC of "s:<key>">`, what
    /// `query_scope_study()` recomputes.
    package func scope(studyKey: String) -> String {
        signed("s:" + studyKey)
    }

    private func signed(_ subject: String) -> String {
        let key = scopeKey.withUnsafeBytes { Data($0) }
        let inner = Data(SHA256.hash(data: key + Data(subject.utf8)))
        return "\(subject):" + SHA256.hash(data: key + inner).hexString
    }

    /// Row-level security for a new study table (run by its creator, in its transaction).
    package func protect(table: String, studyKey: String, on connection: PostgresConnection, logger: Logger) async throws {
        for statement in Self.policyStatements(table: table) + [Self.studyPolicy(table: table, studyKey: studyKey)] {
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

    /// The researchers' policy's name. A changed definition takes a new name, so that a start can
    /// tell an earlier one (`legacyStudyPolicyNames`) and replace it.
    package static let studyPolicyName = "study_rows_v2"
    package static let legacyStudyPolicyNames = ["study_rows"]

    /// The researchers' policy: the whole table, when the scope names the table's study.
    ///
    /// Written as "a row exists" rather than `(SELECT query_scope_study()) = '<key>'` for the
    /// planner's sake. PostgreSQL joins this policy and the participants' with `OR` into every
    /// scan, and it estimates an equality with an unknown value to keep half a percent of a table,
    /// so a researcher's `GROUP BY` over a whole table was planned as a sort of a few hundred rows
    /// and sorted all of them on disk. A test for NULL on a value it cannot know it estimates to
    /// keep nearly every row, which is what a study scope does.
    package static func studyPolicy(table: String, studyKey: String) -> String {
        """
        CREATE POLICY \(studyPolicyName) ON \(table) FOR SELECT
        USING ((SELECT 1 WHERE public.query_scope_study() = \(QueryTranslator.literal(studyKey))) IS NOT NULL)
        """
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
            var tables:
                [(schema: String, table: String, studyKey: String, policed: Bool, studyPoliced: Bool, legacy: [String])] =
                    []
            for try await row in try await connection.query(
                """
                SELECT s.schema_name, l.sql_name, s.study_key,
                       EXISTS (SELECT 1 FROM pg_policies p
                               WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                                 AND p.policyname = 'participant_rows'),
                       EXISTS (SELECT 1 FROM pg_policies p
                               WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                                 AND p.policyname = \(Self.studyPolicyName)),
                       ARRAY(SELECT p.policyname::text FROM pg_policies p
                             WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                               AND p.policyname = ANY(\(Self.legacyStudyPolicyNames)))
                FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
                """, logger: logger
            ).decode((String, String, String, Bool, Bool, [String]).self) { tables.append(row) }
            for (schema, table, studyKey, policed, studyPoliced, legacy) in tables {
                let qualified = "\(SQLName.quoted(schema)).\(SQLName.quoted(table))"
                let statements =
                    (policed ? [] : Self.policyStatements(table: qualified))
                    + legacy.map { "DROP POLICY \(SQLName.quoted($0)) ON \(qualified)" }
                    + (studyPoliced ? [] : [Self.studyPolicy(table: qualified, studyKey: studyKey)])
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            guard let readerRole else { return }
            let role = SQLName.quoted(readerRole)
            for statement in [
                "GRANT EXECUTE ON FUNCTION public.query_scope_participant() TO \(role)",
                "GRANT EXECUTE ON FUNCTION public.query_scope_study() TO \(role)",
                "GRANT USAGE ON SCHEMA mobileappstudy TO \(role)",
                "GRANT SELECT ON ALL TABLES IN SCHEMA mobileappstudy TO \(role)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
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
