import Foundation
import JSONText
import Logging
import PostgresNIO
import ServiceKit

/// Creates and extends a study's response tables from derived survey schemas, in the study's own
/// PostgreSQL schema, so a researcher can query them with psql or R. Lists and columns are only
/// ever added or widened, never removed or renamed (a question dropped from a design just stops
/// receiving values), and a question cannot change its storage type. Changes to one study's tables
/// are serialised by a transaction-scoped advisory lock.
///
/// Identifiers cannot be bound as parameters: every table and column name in the DDL below goes
/// through `SQLName.quoted`; every value is bound.
package struct StudyTables: Sendable {
    /// A list as stored: its table and its columns by lower-cased name.
    package struct StoredList: Sendable {
        package var id: Int64
        package var name: String
        package var sqlName: String
        package var columns: NamesInAnyCase<StoredColumn>
    }

    package struct StoredColumn: Sendable, Equatable {
        package var name: String
        /// DOUBLE, TIMESTAMP, BOOLEAN, VARCHAR, or INTEGER for the system key columns.
        package var storage: String
        package var maxLength: Int?
        package var system: Bool
        package var sqlName: String

        /// The column keeping a date answer's offset; nil for any other column.
        package var offsetSQLName: String? {
            storage == "TIMESTAMP" && !system ? SQLName.offsetColumn(for: sqlName) : nil
        }
    }

    package let client: PostgresClient
    /// Row-level security and the participant-query role's grants for each new table.
    package let access: QueryAccess
    package let logger: Logger

    package init(client: PostgresClient, access: QueryAccess, logger: Logger) {
        self.client = client
        self.access = access
        self.logger = logger
    }

    package static func changedType(_ key: String) -> SurveySchema.DesignError {
        SurveySchema.DesignError(description: "Can not change question result types. Field: \(key)", stepKey: key)
    }

    /// Brings the study's tables up to `schema`; nothing changes when it throws (a design that
    /// cannot be applied throws its `DesignError`).
    package func apply(_ schema: SurveySchema, studyKey: String) async throws {
        do {
            try await applyOnce(schema, studyKey: studyKey)
        } catch let error as PostgresTransactionError {
            if let design = error.closureError as? SurveySchema.DesignError { throw design }
            throw error
        }
    }

    private func applyOnce(_ schema: SurveySchema, studyKey: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await apply(schema, studyKey: studyKey, on: connection)
        }
    }

    /// The same, in the caller's transaction (the storage rehearsal's, which is rolled back):
    /// the study's changes are serialised until that transaction ends.
    package func apply(_ schema: SurveySchema, studyKey: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext(\("study-tables:" + studyKey)))", logger: logger)
        let schemaName = try await ensureSchema(studyKey: studyKey, on: connection)
        var known: NamesInAnyCase<StoredList> = [:]
        for list in schema.lists {
            let parent: StoredList? =
                if let name = list.parent { try await self.list(name, studyKey: studyKey, cached: known, on: connection) } else { nil }
            var stored =
                if let existing = try await self.list(list.name, studyKey: studyKey, cached: known, on: connection) {
                    existing
                } else {
                    try await createList(list.name, parent: parent, studyKey: studyKey, schemaName: schemaName, on: connection)
                }
            for column in list.columns {
                stored.columns[column.name.lowercased()] = try await ensureColumn(
                    column, in: stored, schemaName: schemaName, on: connection)
            }
            known[list.name.lowercased()] = stored
        }
    }

    /// At start: the offset column beside every date answer's column of tables made before
    /// offsets were kept (their rows keep a null offset and read as before). Only missing columns
    /// are added, so a restart takes no table lock.
    package func addMissingOffsetColumns() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('response-offset-columns'))", logger: logger)
            var missing: [(schema: String, table: String, column: String)] = []
            var existing: Set<ScalarKey> = []
            for try await (schema, table, column) in try await connection.query(
                """
                SELECT n.nspname::text, c.relname::text, a.attname::text FROM pg_attribute a
                JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname IN (SELECT schema_name FROM study_schemas) AND a.attnum > 0 AND NOT a.attisdropped
                """, logger: logger
            ).decode((String, String, String).self) { existing.insert(ScalarKey("\(schema)\u{0}\(table)\u{0}\(column)")) }
            for try await (schema, table, column) in try await connection.query(
                """
                SELECT s.schema_name, l.sql_name, c.sql_name FROM response_columns c
                JOIN response_lists l ON l.id = c.list_id JOIN study_schemas s ON s.study_key = l.study_key
                WHERE c.storage = 'TIMESTAMP' AND NOT c.system
                """, logger: logger
            ).decode((String, String, String).self) {
                let offset = SQLName.offsetColumn(for: column)
                if !existing.contains(ScalarKey("\(schema)\u{0}\(table)\u{0}\(offset)")) { missing.append((schema, table, offset)) }
            }
            for (schema, table, offset) in missing {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "ALTER TABLE \(SQLName.quoted(schema)).\(SQLName.quoted(table)) ADD COLUMN IF NOT EXISTS \(SQLName.quoted(offset)) smallint"),
                    logger: logger)
            }
        }
    }

    /// The study's schema name, creating the schema the first time.
    package func ensureSchema(studyKey: String, on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query(
            "SELECT schema_name FROM study_schemas WHERE study_key = \(studyKey)", logger: logger)
        for try await name in rows.decode(String.self) { return name }
        let name = SQLName.schema(forStudy: studyKey)
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(SQLName.quoted(name))"), logger: logger)
        try await access.grantSchema(name, on: connection, logger: logger)
        try await connection.query(
            "INSERT INTO study_schemas (study_key, schema_name) VALUES (\(studyKey), \(name))", logger: logger)
        return name
    }

    /// The study's lists as participant queries and exports see them: tables and their columns in creation order; nil before the study's first design.
    package func catalog(studyKey: String) async throws -> QueryTranslator.Catalog? {
        var schema: String?
        for try await name in try await client.query(
            "SELECT schema_name FROM study_schemas WHERE study_key = \(studyKey)", logger: logger
        ).decode(String.self) { schema = name }
        guard let schema else { return nil }
        var tables: [String: QueryTranslator.Catalog.Table] = [:]
        var order: [String] = []
        for try await (list, listSQL, parent, column, columnSQL, storage, length, system) in try await client.query(
            """
            SELECT l.name, l.sql_name, p.name, c.name, c.sql_name, c.storage, c.max_length, c.system FROM response_lists l
            JOIN response_columns c ON c.list_id = l.id
            LEFT JOIN response_lists p ON p.id = l.parent_id
            WHERE l.study_key = \(studyKey) ORDER BY l.id, c.system DESC, c.id
            """, logger: logger
        ).decode((String, String, String?, String, String, String, Int?, Bool).self) {
            if tables[list.lowercased()] == nil { order.append(list.lowercased()) }
            tables[list.lowercased(), default: .init(name: list, sqlName: listSQL, columns: [], parent: parent)]
                .columns.append(.init(name: column, sqlName: columnSQL, storage: storage, maxLength: length, system: system))
        }
        return QueryTranslator.Catalog(schema: schema, tables: tables, order: order)
    }

    /// Every list of the study with its columns, by lower-cased name, and the study's schema
    /// (nil before its first design).
    package func lists(studyKey: String, on connection: PostgresConnection) async throws -> (schema: String?, lists: NamesInAnyCase<StoredList>) {
        var schema: String?
        for try await name in try await connection.query(
            "SELECT schema_name FROM study_schemas WHERE study_key = \(studyKey)", logger: logger
        ).decode(String.self) { schema = name }
        var byId: [Int64: StoredList] = [:]
        for try await (id, name, sqlName) in try await connection.query(
            "SELECT id, name, sql_name FROM response_lists WHERE study_key = \(studyKey)", logger: logger
        ).decode((Int64, String, String).self) {
            byId[id] = StoredList(id: id, name: name, sqlName: sqlName, columns: [:])
        }
        for try await (listId, name, storage, length, system, sqlName) in try await connection.query(
            """
            SELECT c.list_id, c.name, c.storage, c.max_length, c.system, c.sql_name FROM response_columns c
            JOIN response_lists l ON l.id = c.list_id WHERE l.study_key = \(studyKey)
            """, logger: logger
        ).decode((Int64, String, String, Int?, Bool, String).self) {
            byId[listId]?.columns[name.lowercased()] = StoredColumn(
                name: name, storage: storage, maxLength: length, system: system, sqlName: sqlName)
        }
        var lists = NamesInAnyCase<StoredList>()
        for list in byId.values { lists[list.name] = list }
        return (schema, lists)
    }

    /// A list by name (any case), with its columns.
    package func list(_ name: String, studyKey: String, cached: NamesInAnyCase<StoredList> = [:], on connection: PostgresConnection)
        async throws -> StoredList?
    {
        if let list = cached[name.lowercased()] { return list }
        let rows = try await connection.query(
            """
            SELECT id, name, sql_name FROM response_lists WHERE study_key = \(studyKey) AND lower(name) = lower(\(name))
            """, logger: logger)
        var found: StoredList?
        for try await (id, stored, sqlName) in rows.decode((Int64, String, String).self) {
            found = StoredList(id: id, name: stored, sqlName: sqlName, columns: [:])
        }
        guard var list = found else { return nil }
        let columns = try await connection.query(
            "SELECT name, storage, max_length, system, sql_name FROM response_columns WHERE list_id = \(list.id)",
            logger: logger)
        for try await (column, storage, length, system, sqlName) in columns.decode((String, String, Int?, Bool, String).self) {
            list.columns[column.lowercased()] = StoredColumn(
                name: column, storage: storage, maxLength: length, system: system, sqlName: sqlName)
        }
        return list
    }

    /// A new table: `Key`, `ParticipantId`, `Created` and, for a child list, `<Parent>Id`.
    private func createList(
        _ name: String, parent: StoredList?, studyKey: String, schemaName: String, on connection: PostgresConnection
    ) async throws -> StoredList {
        let sqlName = SQLName.identifier(for: name)
        let table = "\(SQLName.quoted(schemaName)).\(SQLName.quoted(sqlName))"
        var system: [StoredColumn] = [
            StoredColumn(name: "Key", storage: "INTEGER", maxLength: nil, system: true, sqlName: "Key"),
            StoredColumn(name: "ParticipantId", storage: "INTEGER", maxLength: nil, system: true, sqlName: "ParticipantId"),
            StoredColumn(name: "Created", storage: "TIMESTAMP", maxLength: nil, system: true, sqlName: "Created"),
        ]
        var definitions = [
            "\"Key\" bigserial PRIMARY KEY",
            // The participant's number in the study (participants.number), unique in it alone.
            "\"ParticipantId\" bigint NOT NULL",
            "\"Created\" timestamptz NOT NULL DEFAULT now()",
        ]
        if let parent {
            let parentColumn = SQLName.identifier(for: parent.name + "Id")
            system.append(StoredColumn(
                name: parent.name + "Id", storage: "INTEGER", maxLength: nil, system: true, sqlName: parentColumn))
            definitions.append(
                "\(SQLName.quoted(parentColumn)) bigint NOT NULL REFERENCES \(SQLName.quoted(schemaName)).\(SQLName.quoted(parent.sqlName)) (\"Key\") ON DELETE CASCADE")
        }
        // A deleted parent row finds its children through this index, not by scanning the table.
        let parentIndex = parent.map { SQLName.identifier(for: $0.name + "Id") }
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))"), logger: logger)
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE INDEX ON \(table) (\"ParticipantId\")"), logger: logger)
        if let parentIndex {
            try await connection.query(
                PostgresQuery(unsafeSQL: "CREATE INDEX ON \(table) (\(SQLName.quoted(parentIndex)))"), logger: logger)
        }
        try await access.protect(table: table, studyKey: studyKey, on: connection, logger: logger)
        let rows = try await connection.query(
            """
            INSERT INTO response_lists (study_key, name, parent_id, sql_name)
            VALUES (\(studyKey), \(name), \(parent?.id), \(sqlName)) RETURNING id
            """, logger: logger)
        var id: Int64 = 0
        for try await value in rows.decode(Int64.self) { id = value }
        var list = StoredList(id: id, name: name, sqlName: sqlName, columns: [:])
        for column in system {
            try await insert(column, listId: id, on: connection)
            list.columns[column.name.lowercased()] = column
        }
        return list
    }

    /// Adds the column, widens a text column, or refuses a changed type.
    private func ensureColumn(
        _ column: SurveySchema.Column, in list: StoredList, schemaName: String, on connection: PostgresConnection
    ) async throws -> StoredColumn {
        let table = "\(SQLName.quoted(schemaName)).\(SQLName.quoted(list.sqlName))"
        let maxLength: Int? = if case .varchar(let length) = column.storage { length } else { nil }
        guard !column.name.lowercased().hasSuffix(SQLName.offsetSuffix) else {
            throw SurveySchema.DesignError(
                description: "The question key '\(column.name)' ends in '\(SQLName.offsetSuffix)', which names the columns keeping date answers' offsets.")
        }
        guard let existing = list.columns[column.name.lowercased()] else {
            let added = StoredColumn(
                name: column.name, storage: column.storage.family, maxLength: maxLength, system: false,
                sqlName: SQLName.identifier(for: column.name))
            try await connection.query(
                PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ADD COLUMN \(SQLName.quoted(added.sqlName)) \(Self.sqlType(column.storage))"),
                logger: logger)
            if let offset = added.offsetSQLName {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(SQLName.quoted(offset)) smallint"),
                    logger: logger)
            }
            try await insert(added, listId: list.id, on: connection)
            return added
        }
        guard !existing.system, existing.storage == column.storage.family else { throw Self.changedType(column.name) }
        guard column.storage.family == "VARCHAR", let current = existing.maxLength, maxLength ?? Int.max > current else {
            return existing
        }
        // Text only ever widens: a longer limit, or none.
        try await connection.query(
            PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ALTER COLUMN \(SQLName.quoted(existing.sqlName)) TYPE \(Self.sqlType(column.storage))"),
            logger: logger)
        try await connection.query(
            """
            UPDATE response_columns SET max_length = \(maxLength)
            WHERE list_id = \(list.id) AND lower(name) = lower(\(existing.name))
            """, logger: logger)
        var widened = existing
        widened.maxLength = maxLength
        return widened
    }

    private func insert(_ column: StoredColumn, listId: Int64, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO response_columns (list_id, name, storage, max_length, system, sql_name)
            VALUES (\(listId), \(column.name), \(column.storage), \(column.maxLength), \(column.system), \(column.sqlName))
            """, logger: logger)
    }

    /// Dates keep their offsets (`timestamptz`): the original dropped them.
    package static func sqlType(_ storage: SurveySchema.Storage) -> String {
        switch storage {
        case .double: "double precision"
        case .timestamp: "timestamptz"
        case .boolean: "boolean"
        case .varchar(let length?): "varchar(\(length))"
        case .varchar(nil): "text"
        }
    }
}
