import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Inserts a planned response (`ResponseShredder.Row`) into the study's tables, on the caller's
/// connection so it commits or rolls back with the response's status change.
///
/// Set-wise: the rows of one list at one depth of the plan go in one statement, however many
/// there are (a text-choice answer's selections, a form's repetitions), with their keys taken from
/// the table's sequence beforehand so children can name their parents. A response of thousands of
/// selections is a handful of statements, not thousands of round trips. The rows travel as one
/// bound JSON array (`jsonb_populate_recordset` types each value by its column); table and column
/// names come from the stored list metadata and are quoted.
package struct ResponseWriter: Sendable {
    package let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// A row waiting for its insert, with the key its parent was given.
    private struct Pending {
        package var row: ResponseShredder.Row
        package var parent: (column: String, key: Int64)?
        package var topKey: Int64?
    }

    /// Inserts `row` and its children; returns the top row's `Key`.
    @discardableResult
    package func insert(
        _ row: ResponseShredder.Row, schema: String, participantId: Int64, responseId: Int64,
        on connection: PostgresConnection
    ) async throws -> Int64 {
        var level = [Pending(row: row, parent: nil, topKey: nil)]
        var topKey: Int64 = 0
        var metadata: [[String: JSONValue]] = []
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
                let rows = byList[list]!
                let keys = try await allocateKeys(rows.count, table: rows[0].row.list.sqlName, schema: schema, on: connection)
                try await insertRows(rows, keys: keys, schema: schema, participantId: participantId, on: connection)
                for (pending, key) in zip(rows, keys) {
                    let top = pending.topKey ?? key
                    if pending.topKey == nil { topKey = key }
                    for field in pending.row.metadata {
                        metadata.append([
                            "response_id": .number(Double(responseId)), "participant_id": .number(Double(participantId)),
                            "list_name": .string(field.listName), "top_key": .number(Double(top)),
                            "field_name": .string(field.field), "start_time": Self.json(field.startTime),
                            "end_time": Self.json(field.endTime), "skipped": .bool(field.skipped),
                        ])
                    }
                    // The child's `<Parent>Id` column, as its table was created.
                    let parentName = (pending.row.list.name + "Id").lowercased()
                    for child in pending.row.children {
                        let column = child.list.columns[parentName]?.sqlName ?? SQLName.identifier(for: pending.row.list.name + "Id")
                        next.append(Pending(row: child, parent: (column, key), topKey: top))
                    }
                }
            }
            level = next
        }
        if !metadata.isEmpty {
            try await connection.query(
                """
                INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time,
                                               end_time, skipped)
                SELECT response_id, participant_id, list_name, top_key, field_name, start_time, end_time, skipped
                FROM jsonb_to_recordset(\(Self.text(.array(metadata.map(JSONValue.object))))::jsonb) AS m(
                    response_id bigint, participant_id bigint, list_name text, top_key bigint, field_name text,
                    start_time timestamptz, end_time timestamptz, skipped boolean)
                """, logger: logger)
        }
        return topKey
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

    /// The rows of one list, with their keys, in one statement.
    private func insertRows(
        _ rows: [Pending], keys: [Int64], schema: String, participantId: Int64, on connection: PostgresConnection
    ) async throws {
        var columns = ["Key", "ParticipantId"]
        var seen = Set(columns)
        var records: [JSONValue] = []
        for (pending, key) in zip(rows, keys) {
            var record: [String: JSONValue] = ["Key": .number(Double(key)), "ParticipantId": .number(Double(participantId))]
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
        return .string(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    /// Whole numbers are written without a fraction, so keys read into `bigint` columns.
    private static func text(_ value: JSONValue) -> String {
        value.serialized(sortedKeys: false)
    }
}
