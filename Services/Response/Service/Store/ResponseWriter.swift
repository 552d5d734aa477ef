import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Inserts a planned response (`ResponseShredder.Row`) into the study's tables, on the caller's
/// connection so it commits or rolls back with the response's status change. Column names come
/// from the stored list metadata and are quoted; every value is bound.
struct ResponseWriter: Sendable {
    let logger: Logger

    /// Inserts `row` and its children; returns the top row's `Key`.
    @discardableResult
    func insert(
        _ row: ResponseShredder.Row, schema: String, participantId: Int64, responseId: Int64,
        on connection: PostgresConnection
    ) async throws -> Int64 {
        try await insert(row, parent: nil, topKey: nil, schema: schema, participantId: participantId, responseId: responseId, on: connection)
    }

    private func insert(
        _ row: ResponseShredder.Row, parent: (column: String, key: Int64)?, topKey: Int64?, schema: String,
        participantId: Int64, responseId: Int64, on connection: PostgresConnection
    ) async throws -> Int64 {
        var columns = ["\"ParticipantId\""]
        var bindings = PostgresBindings()
        bindings.append(participantId)
        if let parent {
            columns.append(SQLName.quoted(parent.column))
            bindings.append(parent.key)
        }
        for (column, value) in row.values {
            columns.append(SQLName.quoted(column.sqlName))
            switch value {
            case .null: bindings.appendNull()
            case .double(let number): bindings.append(number)
            case .text(let text): bindings.append(text)
            case .bool(let flag): bindings.append(flag)
            case .timestamp(let date): bindings.append(date)
            }
        }
        // Bind markers $1, $2, ... (one per column): every value travels as a parameter.
        let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
        let sql = """
            INSERT INTO \(SQLName.quoted(schema)).\(SQLName.quoted(row.list.sqlName)) (\(columns.joined(separator: ", ")))
            VALUES (\(placeholders)) RETURNING "Key"
            """
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        var key: Int64 = 0
        for try await value in rows.decode(Int64.self) { key = value }
        let top = topKey ?? key
        for field in row.metadata {
            try await connection.query(
                """
                INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time,
                                               end_time, skipped)
                VALUES (\(responseId), \(participantId), \(field.listName), \(top), \(field.field), \(field.startTime),
                        \(field.endTime), \(field.skipped))
                """, logger: logger)
        }
        for child in row.children {
            // The child's `<Parent>Id` column, as its table was created.
            let parentName = (row.list.name + "Id").lowercased()
            let parentColumn = child.list.columns[parentName]?.sqlName ?? SQLName.identifier(for: row.list.name + "Id")
            _ = try await insert(
                child, parent: (parentColumn, key), topKey: top, schema: schema, participantId: participantId,
                responseId: responseId, on: connection)
        }
        return key
    }
}
