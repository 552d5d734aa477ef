import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Runs participant queries (`selectRows`, `executeSQL`) as the reader role, each in its own
/// read-only transaction with a statement timeout and the participant's signed scope, so
/// PostgreSQL's row-level security shows the query only that participant's rows whatever it says.
struct ParticipantQueries: Sendable {
    /// Rows as the apps receive them: names in reply order, values as JSON.
    struct Result: Sendable {
        var columns: [String]
        var rows: [[JSONValue]]
        /// All matching rows, before `maxRows` and `offset` (asked for by `selectRows`).
        var total: Int?
    }

    let reader: PostgresClient
    let access: QueryAccess
    let timeout: Duration
    let maxRows: Int
    let timeZone: TimeZone
    let logger: Logger

    func run(_ translation: QueryTranslator.Translation, participantId: Int64, countTotal: Bool = false)
        async throws(QueryError) -> Result
    {
        do {
            return try await reader.withConnection { connection in
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                do {
                    let result = try await scoped(translation, participantId: participantId, countTotal: countTotal, on: connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let error as QueryError {
            throw error
        } catch let error as PSQLError {
            throw Self.queryError(error, timeout: timeout)
        } catch {
            logger.error("participant query failed", metadata: ["error": "\(String(reflecting: error))"])
            throw QueryError("The query could not be run.")
        }
    }

    private func scoped(
        _ translation: QueryTranslator.Translation, participantId: Int64, countTotal: Bool, on connection: PostgresConnection
    ) async throws -> Result {
        let milliseconds = String(Self.milliseconds(timeout))
        try await connection.query(
            """
            SELECT pg_catalog.set_config('studystack.query_scope', \(access.scope(participantId: participantId)), true),
                   pg_catalog.set_config('statement_timeout', \(milliseconds), true),
                   pg_catalog.set_config('search_path', 'pg_catalog', true),
                   pg_catalog.set_config('standard_conforming_strings', 'on', true)
            """, logger: logger)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        var result = Result(columns: translation.columns, rows: [], total: countTotal ? 0 : nil)
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: translation.sql), logger: logger) {
            var values: [JSONValue] = []
            values.reserveCapacity(translation.columns.count)
            for cell in row {
                if countTotal && cell.columnIndex == translation.columns.count {
                    result.total = try cell.decode(Int.self)
                } else {
                    values.append(Self.value(cell, formatter: formatter))
                }
            }
            result.rows.append(values)
        }
        return result
    }

    /// A cell as JSON: numbers, booleans and text as themselves, dates in the apps' format.
    static func value(_ cell: PostgresCell, formatter: DateFormatter) -> JSONValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .bool: return (try? cell.decode(Bool.self)).map(JSONValue.bool) ?? .null
        case .int2, .int4, .int8: return (try? cell.decode(Int.self)).map { .number(Double($0)) } ?? .null
        case .float4, .float8: return (try? cell.decode(Double.self)).map(JSONValue.number) ?? .null
        case .numeric:
            return (try? cell.decode(String.self)).flatMap(Double.init).map(JSONValue.number) ?? .null
        case .timestamptz, .timestamp:
            return (try? cell.decode(Date.self)).map { .string(formatter.string(from: $0)) } ?? .null
        default: return (try? cell.decode(String.self)).map(JSONValue.string) ?? .null
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// PostgreSQL's complaint, in words the participant may see.
    static func queryError(_ error: PSQLError, timeout: Duration) -> QueryError {
        if error.serverInfo?[.sqlState] == "57014" {
            return QueryError("The query ran longer than \(milliseconds(timeout)) ms and was stopped.")
        }
        if let message = error.serverInfo?[.message] { return QueryError("The query failed: \(message)") }
        return QueryError("The query could not be run.")
    }
}
