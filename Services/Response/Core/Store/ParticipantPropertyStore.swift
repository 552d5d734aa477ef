import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The study's `ParticipantProperties` table (docs/response-api.md, Participant properties): one column per
/// property the study's published version declares, one row per enrollment token that has values
/// or has enrolled. Rows are keyed by the token's HMAC (a hidden column: neither participant
/// queries nor exports show it, and no token is stored in clear); `ParticipantId` is set when the
/// token is used, and from then on the participant can read their row like any other.
package struct ParticipantPropertyStore: Sendable {
    package let client: PostgresClient
    package let tables: StudyTables
    package let tokens: TokenStore
    package let audit: AuditLog
    /// Where participants' anchor dates are sent to registration from.
    package let outbox: Outbox
    package let logger: Logger

    package init(client: PostgresClient, tables: StudyTables, tokens: TokenStore, audit: AuditLog, outbox: Outbox, logger: Logger) {
        self.client = client
        self.tables = tables
        self.tokens = tokens
        self.audit = audit
        self.outbox = outbox
        self.logger = logger
    }

    /// Rows per statement while an upload is written.
    package static let chunk = 5_000
    package static let maxRows = 100_000

    /// The properties the study's last event declared.
    package func definitions(studyKey: String) async throws -> [ParticipantProperty] {
        try await definitions(studyKey: studyKey, on: nil)
    }

    private func definitions(studyKey: String, on connection: PostgresConnection?) async throws -> [ParticipantProperty] {
        let query: PostgresQuery =
            "SELECT coalesce(event->'participantProperties', '[]'::jsonb)::text FROM studies WHERE study_key = \(studyKey)"
        let rows =
            if let connection { try await connection.query(query, logger: logger) } else { try await client.query(query, logger: logger) }
        for try await text in rows.decode(String.self) {
            return try JSONDecoder().decode([ParticipantProperty].self, from: Data(text.utf8))
        }
        return []
    }

    /// Creates or extends the table for the study's properties; nothing when it has none.
    /// Returns the table's qualified name.
    @discardableResult
    package func ensureTable(studyKey: String) async throws -> String? {
        let properties = try await definitions(studyKey: studyKey)
        guard !properties.isEmpty else { return try await table(studyKey: studyKey) }
        try await tables.apply(ParticipantProperties.schema(properties), studyKey: studyKey)
        guard let table = try await table(studyKey: studyKey) else { return nil }
        // Rows exist before anyone enrolls; the token's HMAC keys them.
        try await client.query(
            PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ALTER COLUMN \"ParticipantId\" DROP NOT NULL"), logger: logger)
        try await client.query(
            PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS token_hmac text UNIQUE"), logger: logger)
        return table
    }

    /// The table's qualified name, if the study has one.
    package func table(studyKey: String) async throws -> String? {
        try await table(studyKey: studyKey, on: nil)
    }

    private func table(studyKey: String, on connection: PostgresConnection?) async throws -> String? {
        let query: PostgresQuery = """
            SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
            WHERE l.study_key = \(studyKey) AND l.name = \(ParticipantProperties.listName)
            """
        let rows =
            if let connection { try await connection.query(query, logger: logger) } else {
                try await client.query(query, logger: logger)
            }
        for try await (schema, table) in rows.decode((String, String).self) {
            return "\(SQLName.quoted(schema)).\(SQLName.quoted(table))"
        }
        return nil
    }

    /// Checks every row (token of this study, known property, value of its type) and writes them
    /// all, or nothing: returns the problems when there are any.
    package func upload(_ rows: [ParticipantProperties.Row], studyKey: String, actor: String) async throws
        -> [ParticipantProperties.Problem]
    {
        let properties = try await definitions(studyKey: studyKey)
        guard !properties.isEmpty else {
            return [.init(row: 0, field: "", message: "the study's published version declares no participant properties")]
        }
        guard rows.count <= Self.maxRows else {
            return [.init(row: 0, field: "", message: "at most \(Self.maxRows) rows per upload")]
        }
        let byKey = Dictionary(properties.map { ($0.key.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [ParticipantProperties.Problem] = []
        var records: [JSONValue] = []
        // Each well-formed token once, by its row number: its HMAC is both the row's key and
        // what is checked against the study's tokens.
        var tokenRows: [(row: Int, token: String, hmac: String)] = []
        for (index, row) in rows.enumerated() {
            let number = row.line ?? index + 1
            guard let token = EnrollmentToken.normalized(row.token), EnrollmentToken.isValid(token) else {
                problems.append(.init(row: number, field: "token", message: "Invalid token: '\(row.token)'"))
                continue
            }
            let hmac = tokens.hmac(token)
            tokenRows.append((number, token, hmac))
            var record: JSONObject = ["token_hmac": .string(hmac)]
            for (name, text) in row.values {
                guard let property = byKey[name.lowercased()] else {
                    problems.append(.init(row: number, field: name, message: "no participant property '\(name)' in this study"))
                    continue
                }
                do {
                    record[SQLName.identifier(for: property.key)] = try ParticipantProperties.value(text, as: property.dataType)
                } catch {
                    problems.append(.init(row: number, field: name, message: error.message))
                }
            }
            records.append(.object(record))
        }
        // Every token must be one of this study's.
        var known: Set<String> = []
        for try await hmac in try await client.query(
            """
            SELECT t.token_hmac FROM enrollment_tokens t JOIN token_batches b ON b.id = t.batch_id
            WHERE b.study_key = \(studyKey) AND t.token_hmac = ANY(\(tokenRows.map(\.hmac)))
            """, logger: logger
        ).decode(String.self) { known.insert(hmac) }
        for entry in tokenRows where !known.contains(entry.hmac) {
            problems.append(.init(row: entry.row, field: "token", message: "Unknown token: '\(entry.token)'"))
        }
        guard problems.isEmpty else { return problems.sorted { ($0.row, $0.field) < ($1.row, $1.field) } }
        guard let table = try await ensureTable(studyKey: studyKey) else { return [] }

        let columns = properties.map { SQLName.quoted(SQLName.identifier(for: $0.key)) }
        // Only the columns the upload names change; the others keep their values.
        let named = Set(rows.flatMap { $0.values.keys.compactMap { byKey[$0.lowercased()] } }.map(\.key))
        let updates = properties.filter { named.contains($0.key) }.map { SQLName.quoted(SQLName.identifier(for: $0.key)) }
        let assignments = updates.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let conflict = assignments.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(assignments)"
        let encoder = JSONEncoder()
        try await client.withTransaction(logger: logger) { connection in
            for start in stride(from: 0, to: records.count, by: Self.chunk) {
                let chunk = JSONValue.array(Array(records[start..<min(start + Self.chunk, records.count)]))
                var binds = PostgresBindings()
                binds.append(String(decoding: try encoder.encode(chunk), as: UTF8.self))
                // The participant a token already enrolled gets the row at once.
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO \(table) (token_hmac, "ParticipantId", \(columns.joined(separator: ", ")))
                            SELECT r.token_hmac, p.number, \(columns.map { "r.\($0)" }.joined(separator: ", "))
                            FROM jsonb_populate_recordset(NULL::\(table), $1::jsonb) r
                            LEFT JOIN public.enrollment_tokens t ON t.token_hmac = r.token_hmac
                            LEFT JOIN public.participants p ON p.id = t.participant_id
                            ON CONFLICT (token_hmac) \(conflict)
                            """, binds: binds), logger: logger)
            }
            try await queueAnchorDates(
                studyKey: studyKey, table: table, properties: properties, of: .tokens(tokenRows.map(\.hmac)), on: connection)
            try await audit.record(
                actor: actor, action: "participant_properties.uploaded", studyId: studyKey,
                details: ["rows": String(rows.count)], on: connection)
        }
        return []
    }

    /// The pre-enrollment values uploaded for a token, for `validateEnrollmentToken`.
    package func preEnrollment(token: String, studyKey: String) async throws -> [(String, JSONValue)] {
        let properties = try await definitions(studyKey: studyKey).filter { $0.timing == .preEnrollment }
        guard !properties.isEmpty, let table = try await table(studyKey: studyKey) else { return [] }
        let columns = properties.map { "pg_catalog.to_json(\(SQLName.quoted(SQLName.identifier(for: $0.key))))::text" }
        var binds = PostgresBindings()
        binds.append(tokens.hmac(token))
        var found: [(String, JSONValue)] = []
        for try await row in try await client.query(
            PostgresQuery(unsafeSQL: "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE token_hmac = $1", binds: binds),
            logger: logger)
        {
            for (property, cell) in zip(properties, row) {
                let text = try cell.decode(String?.self)
                let value = try text.map { try JSONValue.parse($0.utf8, budget: .storedValue(bytes: $0.utf8.count)) } ?? .null
                found.append((property.key, value))
            }
        }
        return found
    }

    /// At enrollment, in its transaction: the participant's row (made if none was uploaded) gets
    /// their number in the study, so their own queries see it.
    package func attach(participantId: Int64, tokenHMAC: String?, studyKey: String, on connection: PostgresConnection) async throws {
        guard let table = try await table(studyKey: studyKey, on: connection) else { return }
        var binds = PostgresBindings()
        binds.append(participantId)
        binds.append(tokenHMAC)
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(table) ("ParticipantId", token_hmac) SELECT p.number, $2 FROM public.participants p WHERE p.id = $1
                    ON CONFLICT (token_hmac) DO UPDATE SET "ParticipantId" = excluded."ParticipantId"
                    """, binds: binds), logger: logger)
        let properties = try await definitions(studyKey: studyKey, on: connection)
        try await queueAnchorDates(studyKey: studyKey, table: table, properties: properties, of: .participant(participantId), on: connection)
    }

    /// Whose anchor dates to send.
    package enum Holders: Sendable {
        case participant(Int64)
        case tokens([String])
    }

    /// Queues, in `connection`'s transaction, the date properties that may anchor schedules
    /// (`useAsAnchor`) of the enrolled MyStudies participants among `holders`, for registration
    /// (`PropertyDates`, docs/schedules.md, Anchors): all of each one's, so a value cleared is
    /// gone there too. A date is the day of the stored instant in UTC (a `yyyy-MM-dd` upload is
    /// that day at midnight UTC). Nothing when the study has no such property. A property whose
    /// column the table does not have yet (the study event that declared it is stored, its column
    /// still to be added) is left out rather than failing the enrolment it is part of.
    func queueAnchorDates(
        studyKey: String, table: String, properties: [ParticipantProperty], of holders: Holders, on connection: PostgresConnection
    ) async throws {
        var stored: Set<String> = []
        for try await name in try await connection.query(
            """
            SELECT lower(c.name) FROM response_columns c JOIN response_lists l ON l.id = c.list_id
            WHERE l.study_key = \(studyKey) AND l.name = \(ParticipantProperties.listName) AND c.storage = 'TIMESTAMP'
            """, logger: logger
        ).decode(String.self) { stored.insert(name) }
        let anchors = properties.filter { $0.useAsAnchor == true && $0.dataType == .date && stored.contains($0.key.lowercased()) }
        guard !anchors.isEmpty else { return }
        let columns = anchors.map {
            "to_char(t.\(SQLName.quoted(SQLName.identifier(for: $0.key))) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
        }
        var binds = PostgresBindings()
        let filter: String
        switch holders {
        case .participant(let id):
            binds.append(id)
            filter = "t.\"ParticipantId\" = (SELECT number FROM public.participants WHERE id = $1)"
        case .tokens(let hmacs):
            binds.append(hmacs)
            filter = "t.token_hmac = ANY($1)"
        }
        binds.append(studyKey)
        var studyId: String?
        var participants: [PropertyDates.Participant] = []
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT s.study_id, p.enrolled_token_sha256, \(columns.joined(separator: ", "))
                    FROM \(table) t JOIN public.participants p ON p.study_key = $2 AND p.number = t."ParticipantId"
                    JOIN public.studies s ON s.study_key = p.study_key
                    WHERE \(filter) AND p.enrolled_token_sha256 IS NOT NULL
                    """, binds: binds), logger: logger)
        for try await row in rows {
            let cells = Array(row)
            guard cells.count == anchors.count + 2 else { continue }
            studyId = try cells[0].decode(String.self)
            var dates: [String: String] = [:]
            for (property, cell) in zip(anchors, cells.dropFirst(2)) {
                if let day = try cell.decode(String?.self) { dates[property.key.lowercased()] = day }
            }
            participants.append(.init(participantTokenSHA256: try cells[1].decode(String.self), dates: dates))
        }
        guard let studyId else { return }
        let asOf = Date()
        for start in stride(from: 0, to: participants.count, by: PropertyDates.maxParticipants) {
            let message = PropertyDates(
                asOf: asOf, participants: Array(participants[start..<min(start + PropertyDates.maxParticipants, participants.count)]))
            try await outbox.enqueue(InternalCalls.propertyDates, ["studyId": studyId], payload: message, on: connection)
        }
    }
}
