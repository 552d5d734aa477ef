import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What lets the query roles read study tables, and only what their callers may: row-level
/// security on every study table (a participant's own rows, or the whole study for a researcher),
/// SELECT and schema USAGE granted to those roles, the researchers' `mobileappstudy` views, and
/// the key that signs the scopes (migrations 6 and 12 explain the scheme).
///
/// Two roles, each with a policy of its own. Participants' queries run as the reader, the login
/// of `QUERY_DATABASE_URL`; researchers' switch to the researcher role (`<reader>_researcher`, a
/// role without login the reader is a member of, NOINHERIT). PostgreSQL joins every policy that
/// applies to a role with `OR`: with both on one role a participant's query could not use the
/// `ParticipantId` index, and read the whole table to keep their rows.
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

    /// The role researchers' queries run as: the reader's name with `_researcher`.
    package var researcherRole: String? { readerRole.map(Self.researcherRole(reader:)) }

    package static func researcherRole(reader: String) -> String { reader + "_researcher" }

    /// Whom each policy applies to, as `CREATE POLICY ... TO` takes it: everyone (`PUBLIC`) when
    /// no reader is configured, for then nobody but the service reads the tables.
    private var participantPolicyRole: String { readerRole.map(SQLName.quoted) ?? "PUBLIC" }
    private var studyPolicyRole: String { researcherRole.map(SQLName.quoted) ?? "PUBLIC" }

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
        for statement in [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY", participantPolicy(table: table, studyKey: studyKey),
            studyPolicy(table: table, studyKey: studyKey),
        ] {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        for role in [readerRole, researcherRole].compactMap({ $0 }) {
            try await connection.query(
                PostgresQuery(unsafeSQL: "GRANT SELECT ON \(table) TO \(SQLName.quoted(role))"), logger: logger)
        }
    }

    /// USAGE on a new study schema for the reader and the researcher role.
    package func grantSchema(_ schema: String, on connection: PostgresConnection, logger: Logger) async throws {
        for role in [readerRole, researcherRole].compactMap({ $0 }) {
            try await connection.query(
                PostgresQuery(unsafeSQL: "GRANT USAGE ON SCHEMA \(SQLName.quoted(schema)) TO \(SQLName.quoted(role))"),
                logger: logger)
        }
    }

    /// The participants' policy's name; as the researchers', a changed definition takes a new one.
    package static let participantPolicyName = "participant_rows_v2"
    package static let legacyParticipantPolicyNames = ["participant_rows"]

    /// The participants' policy: their own rows, for the reader. `ParticipantId` is the number the
    /// study gave them (migration 33), unique in the study only, so the scope's participant is
    /// looked up in the table's own study.
    package func participantPolicy(table: String, studyKey: String) -> String {
        """
        CREATE POLICY \(Self.participantPolicyName) ON \(table) FOR SELECT TO \(participantPolicyRole)
        USING ("ParticipantId" = (SELECT public.query_scope_number(\(QueryTranslator.literal(studyKey)))))
        """
    }

    /// The researchers' policy's name. A changed definition takes a new name, so that a start can
    /// tell an earlier one (`legacyStudyPolicyNames`) and replace it.
    package static let studyPolicyName = "study_rows_v2"
    package static let legacyStudyPolicyNames = ["study_rows"]

    /// The researchers' policy: the whole table, when the scope names the table's study.
    ///
    /// Written as "a row exists" rather than `(SELECT query_scope_study()) = '<key>'` for the
    /// planner's sake: it estimates an equality with an unknown value to keep half a percent of a
    /// table, so a researcher's `GROUP BY` over a whole table was planned as a sort of a few
    /// hundred rows and sorted all of them on disk. A test for NULL on a value it cannot know it
    /// estimates to keep nearly every row, which is what a study scope does.
    package func studyPolicy(table: String, studyKey: String) -> String {
        """
        CREATE POLICY \(Self.studyPolicyName) ON \(table) FOR SELECT TO \(studyPolicyRole)
        USING ((SELECT 1 WHERE public.query_scope_study() = \(QueryTranslator.literal(studyKey))) IS NOT NULL)
        """
    }

    /// A reader is configured, but the researcher role it needs is missing or not one of its roles.
    package struct MissingResearcherRole: Error, CustomStringConvertible {
        package let reader: String
        package let researcher: String

        package var description: String {
            guard researcher.utf8.count <= QueryAccess.maxRoleNameBytes else {
                return "The query login \(reader) (QUERY_DATABASE_URL) has a name too long for its researcher role "
                    + "\(researcher): PostgreSQL cuts names at \(QueryAccess.maxRoleNameBytes) bytes. Use a login of at most "
                    + "\(QueryAccess.maxRoleNameBytes - 11) bytes."
            }
            return "The query login \(reader) (QUERY_DATABASE_URL) needs a role \(researcher) that it is a member of, for "
                + "researchers' queries. As a superuser: CREATE ROLE \(SQLName.quoted(researcher)) NOLOGIN; "
                + "GRANT \(SQLName.quoted(researcher)) TO \(SQLName.quoted(reader));"
        }
    }

    /// PostgreSQL's longest name (NAMEDATALEN - 1); a longer one is cut, so `<reader>_researcher`
    /// would name another role than the one looked for.
    package static let maxRoleNameBytes = 63

    /// At start: stores the scope key and brings every existing study table and schema up to the
    /// rules above (tables made before a reader role was configured, under another one, or by an
    /// earlier version: its policies' shape, name and roles).
    package func prepare(client: PostgresClient, logger: Logger) async throws {
        let key = scopeKey.withUnsafeBytes { Data($0) }
        if let readerRole, let researcherRole {
            guard researcherRole.utf8.count <= Self.maxRoleNameBytes else {
                throw MissingResearcherRole(reader: readerRole, researcher: researcherRole)
            }
            var member = false
            for try await found in try await client.query(
                """
                SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = \(researcherRole))
                   AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = \(readerRole))
                   AND pg_has_role(\(readerRole), \(researcherRole), 'MEMBER')
                """, logger: logger
            ).decode(Bool.self) { member = found }
            guard member else { throw MissingResearcherRole(reader: readerRole, researcher: researcherRole) }
        }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('response-query-access'))", logger: logger)
            try await connection.query(
                """
                INSERT INTO query_scope_key (key) VALUES (\(key))
                ON CONFLICT (singleton) DO UPDATE SET key = excluded.key
                """, logger: logger)
            // For each table and each of its two policies: whether it applies to the right role
            // (nil when the table lacks it); and any policy of an earlier shape. pg_policies names
            // PUBLIC `public`.
            let participantRole = readerRole ?? "public"
            let studyRole = researcherRole ?? "public"
            var tables: [(schema: String, table: String, studyKey: String, participant: Bool?, study: Bool?, legacy: [String])] = []
            for try await row in try await connection.query(
                """
                SELECT s.schema_name, l.sql_name, s.study_key,
                       (SELECT p.roles = ARRAY[\(participantRole)]::name[] FROM pg_policies p
                        WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                          AND p.policyname = \(Self.participantPolicyName)),
                       (SELECT p.roles = ARRAY[\(studyRole)]::name[] FROM pg_policies p
                        WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                          AND p.policyname = \(Self.studyPolicyName)),
                       ARRAY(SELECT p.policyname::text FROM pg_policies p
                             WHERE p.schemaname = s.schema_name AND p.tablename = l.sql_name
                               AND p.policyname = ANY(\(Self.legacyStudyPolicyNames + Self.legacyParticipantPolicyNames)))
                FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
                """, logger: logger
            ).decode((String, String, String, Bool?, Bool?, [String]).self) { tables.append(row) }
            for (schema, table, studyKey, participant, study, legacy) in tables {
                let qualified = "\(SQLName.quoted(schema)).\(SQLName.quoted(table))"
                var statements: [String] = []
                statements += legacy.map { "DROP POLICY \(SQLName.quoted($0)) ON \(qualified)" }
                switch participant {
                case nil:
                    statements += [
                        "ALTER TABLE \(qualified) ENABLE ROW LEVEL SECURITY", participantPolicy(table: qualified, studyKey: studyKey),
                    ]
                case .some(false):
                    statements.append("ALTER POLICY \(Self.participantPolicyName) ON \(qualified) TO \(participantPolicyRole)")
                case .some(true): break
                }
                switch study {
                case nil: statements.append(studyPolicy(table: qualified, studyKey: studyKey))
                case .some(false): statements.append("ALTER POLICY \(Self.studyPolicyName) ON \(qualified) TO \(studyPolicyRole)")
                case .some(true): break
                }
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            guard let readerRole, let researcherRole else { return }
            let reader = SQLName.quoted(readerRole)
            let researcher = SQLName.quoted(researcherRole)
            // The researchers' function and views are the researcher role's alone (an earlier
            // version granted them to the reader).
            var statements = [
                "GRANT EXECUTE ON FUNCTION public.query_scope_participant() TO \(reader)",
                "GRANT EXECUTE ON FUNCTION public.query_scope_number(text) TO \(reader)",
                "REVOKE EXECUTE ON FUNCTION public.query_scope_study() FROM \(reader)",
                "REVOKE SELECT ON ALL TABLES IN SCHEMA mobileappstudy FROM \(reader)",
                "REVOKE USAGE ON SCHEMA mobileappstudy FROM \(reader)",
                "GRANT EXECUTE ON FUNCTION public.query_scope_study() TO \(researcher)",
                "GRANT USAGE ON SCHEMA mobileappstudy TO \(researcher)",
                "GRANT SELECT ON ALL TABLES IN SCHEMA mobileappstudy TO \(researcher)",
            ]
            for schema in Set(tables.map(\.schema)).sorted() {
                for role in [reader, researcher] {
                    statements += [
                        "GRANT USAGE ON SCHEMA \(SQLName.quoted(schema)) TO \(role)",
                        "GRANT SELECT ON ALL TABLES IN SCHEMA \(SQLName.quoted(schema)) TO \(role)",
                    ]
                }
            }
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }
}
