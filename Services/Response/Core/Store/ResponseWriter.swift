import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Inserts planned responses (`ResponseShredder.Row`) into a study's tables, on the caller's
/// connection so they commit or roll back with the responses' status changes.
///
/// Set-wise across a whole batch: the rows of one list at one depth of every plan go in one
/// statement, however many responses and rows there are (a text-choice answer's selections, a
/// form's repetitions), and the timing rows of the whole batch in one more. Keys are taken from
/// a table's sequence beforehand only where something must name them (a top row, which the
/// timing rows point at, or a row with children); other rows take their key from the column's
/// default. A batch of a hundred 30-question responses is a handful of statements, not
/// thousands of round trips. A list's rows travel as one bound JSON array
/// (`jsonb_populate_recordset` types each value by its column, whatever columns the design
/// made), the timing rows, whose columns are fixed, as typed arrays; table and column names come
/// from the stored list metadata and are quoted.
package struct ResponseWriter: Sendable {
    /// One response's plan, with whom and what it comes from.
    package struct Planned: Sendable {
        package var row: ResponseShredder.Row
        /// The service's own key of the participant (timing rows).
        package var participantId: Int64
        /// Their number in the study: the `ParticipantId` of its tables.
        package var participantNumber: Int64
        package var responseId: Int64

        package init(row: ResponseShredder.Row, participantId: Int64, participantNumber: Int64, responseId: Int64) {
            self.row = row
            self.participantId = participantId
            self.participantNumber = participantNumber
            self.responseId = responseId
        }
    }

    package let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// A row waiting for its insert, with the key its parent was given.
    private struct Pending {
        var row: ResponseShredder.Row
        var participantId: Int64
        var participantNumber: Int64
        var responseId: Int64
        var parent: (column: String, key: Int64)?
        var topKey: Int64?
    }

    /// The timing rows of a batch, a column each.
    private struct Timings {
        static let none = Int64.min
        var responseIds: [Int64] = []
        var participantIds: [Int64] = []
        var listNames: [String] = []
        var topKeys: [Int64] = []
        var fieldNames: [String] = []
        var starts: [Int64] = []
        var ends: [Int64] = []
        var skipped: [Bool] = []

        mutating func append(_ field: ResponseShredder.FieldMetadata, responseId: Int64, participantId: Int64, topKey: Int64) {
            responseIds.append(responseId)
            participantIds.append(participantId)
            listNames.append(field.listName)
            topKeys.append(topKey)
            fieldNames.append(field.field)
            starts.append(field.startTime.map(GregorianDays.milliseconds) ?? Self.none)
            ends.append(field.endTime.map(GregorianDays.milliseconds) ?? Self.none)
            skipped.append(field.skipped)
        }
    }

    /// Inserts every plan's rows and their timing rows.
    package func insert(_ responses: [Planned], schema: String, on connection: PostgresConnection) async throws {
        var level = responses.map {
            Pending(
                row: $0.row, participantId: $0.participantId, participantNumber: $0.participantNumber, responseId: $0.responseId,
                parent: nil, topKey: nil)
        }
        var timings = Timings()
        while !level.isEmpty {
            var next: [Pending] = []
            // One statement per list at this depth, in the order the lists first appear.
            var order: [String] = []
            var byList: [String: [Pending]] = [:]
            for pending in level {
                if byList[pending.row.list.sqlName] == nil { order.append(pending.row.list.sqlName) }
                byList[pending.row.list.sqlName, default: []].append(pending)
            }
            for list in order {
                let rows = byList[list, default: []]
                let named = rows.contains { $0.topKey == nil || !$0.row.children.isEmpty }
                let keys: [Int64]? =
                    named ? try await allocateKeys(rows.count, table: rows[0].row.list.sqlName, schema: schema, on: connection) : nil
                try await insertRows(rows, keys: keys, schema: schema, on: connection)
                for (index, pending) in rows.enumerated() {
                    let key = keys?[index]
                    let top = pending.topKey ?? key ?? 0
                    for field in pending.row.metadata {
                        timings.append(field, responseId: pending.responseId, participantId: pending.participantId, topKey: top)
                    }
                    guard let key, !pending.row.children.isEmpty else { continue }
                    // The child's `<Parent>Id` column, as its table was created.
                    let parentName = (pending.row.list.name + "Id").lowercased()
                    for child in pending.row.children {
                        let column = child.list.columns[parentName]?.sqlName ?? SQLName.identifier(for: pending.row.list.name + "Id")
                        next.append(
                            Pending(
                                row: child, participantId: pending.participantId, participantNumber: pending.participantNumber,
                                responseId: pending.responseId,
                                parent: (column, key), topKey: top))
                    }
                }
            }
            level = next
        }
        if !timings.responseIds.isEmpty {
            // Typed arrays, sent in binary: nothing to print or parse for thousands of rows. A
            // time is milliseconds since 1970; `Timings.none` stands for no time (arrays of
            // optionals cannot be bound).
            try await connection.query(
                """
                INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time,
                                               end_time, skipped)
                SELECT m.response_id, m.participant_id, m.list_name, m.top_key, m.field_name,
                       CASE WHEN m.start_ms <> \(Timings.none) THEN 'epoch'::timestamptz + m.start_ms * interval '1 millisecond' END,
                       CASE WHEN m.end_ms <> \(Timings.none) THEN 'epoch'::timestamptz + m.end_ms * interval '1 millisecond' END,
                       m.skipped
                FROM unnest(\(timings.responseIds), \(timings.participantIds), \(timings.listNames), \(timings.topKeys),
                            \(timings.fieldNames), \(timings.starts), \(timings.ends), \(timings.skipped))
                    AS m(response_id, participant_id, list_name, top_key, field_name, start_ms, end_ms, skipped)
                """, logger: logger)
        }
    }

    /// `count` keys from the table's `Key` sequence, ascending.
    private func allocateKeys(_ count: Int, table: String, schema: String, on connection: PostgresConnection) async throws
        -> [Int64]
    {
        let qualified = "\(SQLName.quoted(schema)).\(SQLName.quoted(table))"
        let rows = try await connection.query(
            """
            SELECT nextval(pg_get_serial_sequence(\(qualified), 'Key')) FROM generate_series(1, \(count))
            """, logger: logger)
        var keys: [Int64] = []
        for try await key in rows.decode(Int64.self) { keys.append(key) }
        return keys.sorted()
    }

    /// The rows of one list in one statement, with the keys given (else the column's default).
    private func insertRows(_ rows: [Pending], keys: [Int64]?, schema: String, on connection: PostgresConnection) async throws {
        var columns = keys == nil ? ["ParticipantId"] : ["Key", "ParticipantId"]
        var seen = Set(columns)
        var records: [JSONValue] = []
        for (index, pending) in rows.enumerated() {
            var record: JSONObject = ["ParticipantId": .number(Double(pending.participantNumber))]
            if let keys { record["Key"] = .number(Double(keys[index])) }
            if let parent = pending.parent {
                if seen.insert(parent.column).inserted { columns.append(parent.column) }
                record[parent.column] = .number(Double(parent.key))
            }
            for (column, value) in pending.row.values {
                if seen.insert(column.sqlName).inserted { columns.append(column.sqlName) }
                record[column.sqlName] = Self.json(value)
                // A date answer's offset, beside it (`SQLName.offsetColumn`).
                if case .timestamp(_, let minutes?) = value, let offsetColumn = column.offsetSQLName {
                    if seen.insert(offsetColumn).inserted { columns.append(offsetColumn) }
                    record[offsetColumn] = .number(Double(minutes))
                }
            }
            records.append(.object(record))
        }
        let table = "\(SQLName.quoted(schema)).\(SQLName.quoted(rows[0].row.list.sqlName))"
        let names = columns.map(SQLName.quoted).joined(separator: ", ")
        var bindings = PostgresBindings()
        bindings.append(Self.text(.array(records)))
        // Names are quoted identifiers from the stored metadata; the one value is bound.
        let sql = "INSERT INTO \(table) (\(names)) SELECT \(names) FROM jsonb_populate_recordset(NULL::\(table), $1::jsonb)"
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
    }

    private static func json(_ cell: ResponseShredder.Cell) -> JSONValue {
        switch cell {
        case .null: .null
        case .double(let number): .number(number)
        case .text(let text): .string(text)
        case .bool(let flag): .bool(flag)
        case .timestamp(let date, _): json(date)
        }
    }

    /// An instant as PostgreSQL reads it into `timestamptz` (UTC, to the millisecond, as the
    /// apps send them).
    private static func json(_ date: Date?) -> JSONValue {
        guard let date else { return .null }
        return .string(GregorianDays.text(date))
    }

    /// Whole numbers are written without a fraction, so keys read into `bigint` columns.
    private static func text(_ value: JSONValue) -> String {
        value.serialized(sortedKeys: false)
    }
}
