import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Runs translated queries in PostgreSQL's sandbox: as the reader role, each in its own read-only
/// transaction with a statement timeout and a signed scope, so row-level security shows the
/// query only what its caller may read whatever it says: a participant's own rows (the apps'
/// `selectRows` and `executeSQL`), or one study's rows (a researcher's LabKey API calls).
///
/// A reply is read through a cursor a batch at a time and stops at `maxReplyBytes`, the whole
/// query at the timeout, and each caller has at most `maxConcurrent` queries running (advisory
/// locks, so the bound holds across replicas). Anyone can enroll in an open study, so for
/// participants these bounds are what stands between an anonymous caller and the database.
package struct SandboxedQueries: Sendable {
    /// Whose rows a query may see.
    package enum Scope: Sendable, Equatable {
        case participant(Int64)
        /// One study's rows, for a researcher; `caller` is whose query slots it takes.
        case study(key: String, caller: UUID)
    }

    package struct Limits: Sendable {
        package var timeout: Duration
        /// The most rows a reply carries, whatever the query asks for.
        package var maxRows: Int
        package var maxReplyBytes: Int
        /// Queries one caller may have running at once.
        package var maxConcurrent: Int

        package init(timeout: Duration, maxRows: Int, maxReplyBytes: Int, maxConcurrent: Int) {
            self.timeout = timeout
            self.maxRows = maxRows
            self.maxReplyBytes = maxReplyBytes
            self.maxConcurrent = maxConcurrent
        }
    }

    /// Rows as the callers receive them: names in reply order, values as JSON.
    package struct Result: Sendable {
        package var columns: [String]
        /// Each column's storage (`QueryTranslator.Catalog.Column.storage`): the list's when the
        /// column is one, else what PostgreSQL answered with (VARCHAR when no row said).
        package var storages: [String]
        package var rows: [[JSONValue]]
        /// All matching rows, before `maxRows` and `offset` (asked for by `selectRows`, and
        /// counted when the reply was cut at the row limit).
        package var total: Int?
        /// The reply was cut at the row limit (`Translation.cappedAt`): `total` says how many
        /// rows the query gives.
        package var cut = false

        package init(columns: [String], storages: [String], rows: [[JSONValue]], total: Int? = nil, cut: Bool = false) {
            self.columns = columns
            self.storages = storages
            self.rows = rows
            self.total = total
            self.cut = cut
        }
    }

    package let reader: PostgresClient
    package let access: QueryAccess
    package let limits: Limits
    /// How dates are written (`DateFormatter` pattern) and in which zone.
    package let dateFormat: String
    package let timeZone: TimeZone
    package let logger: Logger

    package var timeout: Duration { limits.timeout }
    package var maxRows: Int { limits.maxRows }

    /// The apps' date format: `2017-03-17 11:11:11.000`, in the zone they read it in.
    package static let participantDateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
    /// Researchers' dates: LabKey's layout (`2017/03/17 11:11:11`) with milliseconds and the
    /// offset, so a script knows the instant (R's `strptime` with LabKey's format reads the
    /// first part and ignores the rest).
    package static let researcherDateFormat = "yyyy/MM/dd HH:mm:ss.SSS Z"

    package init(
        reader: PostgresClient, access: QueryAccess, limits: Limits, dateFormat: String = Self.participantDateFormat,
        timeZone: TimeZone, logger: Logger
    ) {
        self.reader = reader
        self.access = access
        self.limits = limits
        self.dateFormat = dateFormat
        self.timeZone = timeZone
        self.logger = logger
    }

    package func run(_ translation: QueryTranslator.Translation, participantId: Int64, countTotal: Bool = false)
        async throws(QueryError) -> Result
    {
        try await run(translation, scope: .participant(participantId), countTotal: countTotal)
    }

    package func run(_ translation: QueryTranslator.Translation, scope: Scope, countTotal: Bool = false)
        async throws(QueryError) -> Result
    {
        do {
            return try await reader.withConnection { connection in
                try await connection.withReadOnlySnapshot(logger: logger) { connection in
                    try await scoped(translation, scope: scope, countTotal: countTotal, on: connection)
                }
            }
        } catch let error as QueryError {
            throw error
        } catch let error as PSQLError {
            throw Self.queryError(error, timeout: timeout)
        } catch {
            logger.error("sandboxed query failed", metadata: ["error": "\(String(reflecting: error))"])
            throw QueryError("The query could not be run.")
        }
    }

    private func scoped(
        _ translation: QueryTranslator.Translation, scope: Scope, countTotal: Bool, on connection: PostgresConnection
    ) async throws -> Result {
        let milliseconds = String(Self.milliseconds(timeout))
        let signed =
            switch scope {
            case .participant(let id): access.scope(participantId: id)
            case .study(let key, _): access.scope(studyKey: key)
            }
        // A researcher's query runs as the researcher role, whose policy is the study's
        // (`QueryAccess`); a participant's as the reader itself. Without the reader's login
        // (never here: no reader, no queries) the role stays as it is.
        let role: String? =
            switch scope {
            case .participant: nil
            case .study: access.researcherRole
            }
        // The cursor bounds what is held at once; every row of it is read. PostgreSQL plans a
        // cursor for its first tenth by default (`cursor_tuple_fraction`), which chose an
        // index-ordered aggregate over a whole table where a hash over a scan costs less.
        try await connection.query(
            """
            SELECT pg_catalog.set_config('studystack.query_scope', \(signed), true),
                   pg_catalog.set_config('statement_timeout', \(milliseconds), true),
                   pg_catalog.set_config('cursor_tuple_fraction', '1', true),
                   pg_catalog.set_config('search_path', 'pg_catalog', true),
                   pg_catalog.set_config('standard_conforming_strings', 'on', true),
                   CASE WHEN \(role)::text IS NOT NULL THEN pg_catalog.set_config('role', \(role), true) END
            """, logger: logger)
        try await claimSlot(scope, on: connection)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = dateFormat
        // Date answers come as the wall clock they were answered at (`timestamp`): written as
        // they are, without a zone.
        let wallClock = DateFormatter()
        wallClock.locale = Locale(identifier: "en_US_POSIX")
        wallClock.timeZone = TimeZone(identifier: "UTC")
        wallClock.dateFormat = dateFormat.replacingOccurrences(of: " Z", with: "")
        let deadline = ContinuousClock.now + timeout
        var storages = translation.storages
        var result = Result(columns: translation.columns, storages: [], rows: [], total: countTotal ? 0 : nil)
        var replyBytes = 0
        let rowOverhead = translation.columns.reduce(16) { $0 + $1.utf8.count + 16 }
        try await connection.query(
            PostgresQuery(unsafeSQL: "DECLARE sandboxed_query NO SCROLL CURSOR FOR \(translation.sql)"), logger: logger)
        while true {
            var fetched = 0
            for try await row in try await connection.query(
                "FETCH FORWARD \(unescaped: String(Self.fetchSize)) FROM sandboxed_query", logger: logger)
            {
                fetched += 1
                var values: [JSONValue] = []
                values.reserveCapacity(translation.columns.count)
                replyBytes += rowOverhead
                for cell in row {
                    if cell.columnIndex < storages.count, storages[cell.columnIndex] == nil, cell.bytes != nil {
                        storages[cell.columnIndex] = Self.storage(of: cell.dataType)
                    }
                    let value = Self.value(cell, formatter: cell.dataType == .timestamp ? wallClock : formatter)
                    replyBytes += Self.encodedSize(value)
                    values.append(value)
                }
                guard replyBytes <= limits.maxReplyBytes else {
                    throw QueryError(
                        "The query's reply is larger than \(limits.maxReplyBytes) bytes and was stopped; select fewer rows or columns.")
                }
                result.rows.append(values)
            }
            if fetched < Self.fetchSize { break }
            // Each FETCH has the statement timeout; the whole query has it too.
            guard ContinuousClock.now < deadline else {
                throw QueryError("The query ran longer than \(Self.milliseconds(timeout)) ms and was stopped.")
            }
        }
        result.storages = storages.map { $0 ?? "VARCHAR" }
        // Past the row limit: the row read beyond it goes, and the whole count is read in the same
        // snapshot (under the same timeout), so the reply says it was cut and from how many.
        if let cap = translation.cappedAt, result.rows.count > cap {
            result.rows.removeLast(result.rows.count - cap)
            result.cut = true
        }
        guard result.cut || countTotal else { return result }
        // A page that stopped short of its limit after a row ends the rows: they are the total.
        if !result.cut, let readLimit = translation.readLimit, result.rows.count < readLimit,
            !result.rows.isEmpty || translation.offset == 0
        {
            result.total = translation.offset + result.rows.count
        } else if let countSQL = translation.countSQL {
            try await connection.query("CLOSE sandboxed_query", logger: logger)
            for try await count in try await connection.query(PostgresQuery(unsafeSQL: countSQL), logger: logger).decode(Int.self) {
                result.total = count
            }
        }
        return result
    }

    /// The storage name for a computed column's PostgreSQL type.
    package static func storage(of type: PostgresDataType) -> String {
        switch type {
        case .bool: "BOOLEAN"
        case .int2, .int4, .int8: "INTEGER"
        case .float4, .float8, .numeric: "DOUBLE"
        case .timestamptz, .timestamp: "TIMESTAMP"
        default: "VARCHAR"
        }
    }

    /// Rows read from the cursor at a time: what is held beyond the reply being built.
    package static let fetchSize = 500

    /// First half of the advisory-lock keys of participant-query slots (slot `n` is this plus n).
    package static let slotLockSpace: Int32 = 0x5153_0000
    /// The same for researchers' slots, keyed by their admin id.
    package static let researcherSlotLockSpace: Int32 = 0x5153_1000

    /// Takes one of the caller's query slots for this transaction, or refuses the query.
    private func claimSlot(_ scope: Scope, on connection: PostgresConnection) async throws {
        let (space, key): (Int32, Int32) =
            switch scope {
            case .participant(let id): (Self.slotLockSpace, Int32(truncatingIfNeeded: id))
            case .study(_, let caller):
                (Self.researcherSlotLockSpace, withUnsafeBytes(of: caller.uuid) { $0.loadUnaligned(as: Int32.self) })
            }
        for slot in 0..<Int32(limits.maxConcurrent) {
            let rows = try await connection.query(
                "SELECT pg_catalog.pg_try_advisory_xact_lock(\(space + slot), \(key))", logger: logger)
            for try await taken in rows.decode(Bool.self) where taken { return }
        }
        throw QueryError(
            "You already have \(limits.maxConcurrent) queries running; send this one when one of them has finished.")
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
