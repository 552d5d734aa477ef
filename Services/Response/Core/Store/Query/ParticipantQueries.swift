import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Runs participant queries (`selectRows`, `executeSQL`) as the reader role, each in its own
/// read-only transaction with a statement timeout and the participant's signed scope, so
/// PostgreSQL's row-level security shows the query only that participant's rows whatever it says.
///
/// Anyone can enroll in an open study, so a participant is an anonymous caller: a query's reply
/// is read through a cursor a batch at a time and stops at `maxReplyBytes`, the whole query at
/// the timeout, and each participant has at most `maxConcurrent` queries running (advisory locks,
/// so the bound holds across replicas).
package struct ParticipantQueries: Sendable {
    /// Rows as the apps receive them: names in reply order, values as JSON.
    package struct Result: Sendable {
        package var columns: [String]
        package var rows: [[JSONValue]]
        /// All matching rows, before `maxRows` and `offset` (asked for by `selectRows`).
        package var total: Int?
    }

    package let reader: PostgresClient
    package let access: QueryAccess
    package let timeout: Duration
    package let maxRows: Int
    package let maxReplyBytes: Int
    package let maxConcurrent: Int
    package let timeZone: TimeZone
    package let logger: Logger

    package init(
        reader: PostgresClient, access: QueryAccess, timeout: Duration, maxRows: Int, maxReplyBytes: Int,
        maxConcurrent: Int, timeZone: TimeZone, logger: Logger
    ) {
        self.reader = reader
        self.access = access
        self.timeout = timeout
        self.maxRows = maxRows
        self.maxReplyBytes = maxReplyBytes
        self.maxConcurrent = maxConcurrent
        self.timeZone = timeZone
        self.logger = logger
    }

    package func run(_ translation: QueryTranslator.Translation, participantId: Int64, countTotal: Bool = false)
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
        try await claimSlot(participantId: participantId, on: connection)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let deadline = ContinuousClock.now + timeout
        var result = Result(columns: translation.columns, rows: [], total: countTotal ? 0 : nil)
        var replyBytes = 0
        let rowOverhead = translation.columns.reduce(16) { $0 + $1.utf8.count + 16 }
        try await connection.query(
            PostgresQuery(unsafeSQL: "DECLARE participant_query NO SCROLL CURSOR FOR \(translation.sql)"), logger: logger)
        while true {
            var fetched = 0
            for try await row in try await connection.query(
                "FETCH FORWARD \(unescaped: String(Self.fetchSize)) FROM participant_query", logger: logger)
            {
                fetched += 1
                var values: [JSONValue] = []
                values.reserveCapacity(translation.columns.count)
                replyBytes += rowOverhead
                for cell in row {
                    if countTotal && cell.columnIndex == translation.columns.count {
                        result.total = try cell.decode(Int.self)
                    } else {
                        let value = Self.value(cell, formatter: formatter)
                        replyBytes += Self.encodedSize(value)
                        values.append(value)
                    }
                }
                guard replyBytes <= maxReplyBytes else {
                    throw QueryError(
                        "The query's reply is larger than \(maxReplyBytes) bytes and was stopped; select fewer rows or columns.")
                }
                result.rows.append(values)
            }
            if fetched < Self.fetchSize { break }
            // Each FETCH has the statement timeout; the whole query has it too.
            guard ContinuousClock.now < deadline else {
                throw QueryError("The query ran longer than \(Self.milliseconds(timeout)) ms and was stopped.")
            }
        }
        return result
    }

    /// Rows read from the cursor at a time: what is held beyond the reply being built.
    package static let fetchSize = 500

    /// First half of the advisory-lock keys of participant-query slots (slot `n` is this plus n).
    package static let slotLockSpace: Int32 = 0x5153_0000

    /// Takes one of the participant's query slots for this transaction, or refuses the query.
    private func claimSlot(participantId: Int64, on connection: PostgresConnection) async throws {
        let participantKey = Int32(truncatingIfNeeded: participantId)
        for slot in 0..<Int32(maxConcurrent) {
            let rows = try await connection.query(
                "SELECT pg_catalog.pg_try_advisory_xact_lock(\(Self.slotLockSpace + slot), \(participantKey))", logger: logger)
            for try await taken in rows.decode(Bool.self) where taken { return }
        }
        throw QueryError("You already have \(maxConcurrent) queries running; send this one when one of them has finished.")
    }

    /// About how many bytes `value` takes in the JSON reply.
    package static func encodedSize(_ value: JSONValue) -> Int {
        switch value {
        case .string(let text): text.utf8.count + 2
        case .null: 4
        case .bool: 5
        default: 24
        }
    }

    /// A cell as JSON: numbers, booleans and text as themselves, dates in the apps' format.
    package static func value(_ cell: PostgresCell, formatter: DateFormatter) -> JSONValue {
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

    package static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// PostgreSQL's complaint, in words the participant may see.
    package static func queryError(_ error: PSQLError, timeout: Duration) -> QueryError {
        if error.serverInfo?[.sqlState] == "57014" {
            return QueryError("The query ran longer than \(milliseconds(timeout)) ms and was stopped.")
        }
        if let message = error.serverInfo?[.message] { return QueryError("The query failed: \(message)") }
        return QueryError("The query could not be run.")
    }
}
