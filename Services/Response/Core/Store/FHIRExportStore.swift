import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit

/// The Bulk Data exports of the FHIR API (docs/fhir.md, Bulk Data): their requests, their state,
/// and the NDJSON files they wrote, kept in chunks.
package struct FHIRExportStore: Sendable {
    package enum Status: String, Sendable {
        case queued, running, complete, failed
    }

    package struct Export: Sendable {
        package var id: UUID
        package var clientId: String
        package var studyKey: String
        package var requestURL: String
        package var types: [String]
        package var since: Date?
        package var transactionTime: Date
        package var status: Status
        package var progress: String?
        package var error: String?
        package var attempts: Int
        package var expiresAt: Date
        /// Participants' resources are written de-identified (the client was registered so).
        package var deidentified: Bool
    }

    package struct File: Sendable, Equatable {
        package var number: Int
        package var type: String
        package var resources: Int64
        package var bytes: Int64
    }

    /// A client's exports not yet finished; past this many a new one waits (each holds a copy of
    /// its study's data while it is kept).
    package static let maxUnfinishedPerClient = 2
    /// How long a finished export's files are kept.
    package static let kept: Duration = .seconds(24 * 3600)

    package let client: PostgresClient
    package let logger: Logger

    /// How statements reach the server: the chunk append is prepared once per connection, unless
    /// a pooler in transaction mode stands between.
    package let pooling: DatabaseSettings.Pooling

    package init(client: PostgresClient, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.pooling = pooling
        self.logger = logger
    }

    /// Records a new export, unless the client already has `maxUnfinishedPerClient` unfinished:
    /// then nil. Counted and inserted under a lock on the client's row, so two requests at once
    /// cannot both pass the count.
    package func create(
        clientId: String, studyKey: String, requestURL: String, types: [String], since: Date?, deidentified: Bool
    ) async throws -> Export? {
        try await client.withTransaction(logger: logger) { connection -> Export? in
            _ = try await connection.query("SELECT 1 FROM smart_clients WHERE client_id = \(clientId) FOR UPDATE", logger: logger)
            var unfinished = 0
            for try await count in try await connection.query(
                "SELECT count(*)::int FROM fhir_exports WHERE client_id = \(clientId) AND status IN ('queued', 'running')",
                logger: logger
            ).decode(Int.self) { unfinished = count }
            guard unfinished < Self.maxUnfinishedPerClient else { return nil }
            let id = UUID()
            let rows = try await connection.query(
                """
                INSERT INTO fhir_exports (id, client_id, study_key, request_url, types, since, transaction_time, expires_at, deidentified)
                VALUES (\(id), \(clientId), \(studyKey), \(requestURL), \(types), \(since), now(),
                        now() + make_interval(secs => \(Self.kept.inSeconds)), \(deidentified))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            for try await row in rows.decode(Self.Row.self) { return Self.export(row) }
            return nil
        }
    }

    private typealias Row = (UUID, String, String, String, [String], Date?, Date, String, String?, String?, Int, Date, Bool)
    private static let columns =
        "id, client_id, study_key, request_url, types, since, transaction_time, status, progress, error, attempts, expires_at, deidentified"

    private static func export(_ row: Row) -> Export {
        Export(
            id: row.0, clientId: row.1, studyKey: row.2, requestURL: row.3, types: row.4, since: row.5, transactionTime: row.6,
            status: Status(rawValue: row.7) ?? .failed, progress: row.8, error: row.9, attempts: row.10, expiresAt: row.11,
            deidentified: row.12)
    }

    /// Export `id` of `clientId`; nil for another client's, or one cancelled or expired.
    package func export(_ id: UUID, clientId: String) async throws -> Export? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.columns) FROM fhir_exports WHERE id = \(id) AND client_id = \(clientId) AND expires_at > now()",
            logger: logger)
        for try await row in rows.decode(Self.Row.self) { return Self.export(row) }
        return nil
    }

    /// Whether export `id` is still wanted (not cancelled): asked between pages of its work.
    package func exists(_ id: UUID) async throws -> Bool {
        for try await _ in try await client.query("SELECT 1 FROM fhir_exports WHERE id = \(id)", logger: logger).decode(Int.self) {
            return true
        }
        return false
    }

    /// Cancels (deletes) export `id` of `clientId`, with its files; false when there is none.
    package func cancel(_ id: UUID, clientId: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM fhir_exports WHERE id = \(id) AND client_id = \(clientId) RETURNING id", logger: logger)
        for try await _ in rows.decode(UUID.self) { return true }
        return false
    }

    /// The files of a complete export, in order, with what each holds.
    package func files(of id: UUID) async throws -> [File] {
        let rows = try await client.query(
            "SELECT file_no, type, resources, bytes FROM fhir_export_files WHERE export_id = \(id) ORDER BY file_no", logger: logger)
        var files: [File] = []
        for try await (number, type, resources, bytes) in rows.decode((Int, String, Int64, Int64).self) {
            files.append(File(number: number, type: type, resources: resources, bytes: bytes))
        }
        return files
    }

    /// Chunk `chunk` of a file; nil past its last.
    package func chunk(of id: UUID, file: Int, chunk: Int) async throws -> ByteBuffer? {
        let rows = try await client.query(
            "SELECT data FROM fhir_export_chunks WHERE export_id = \(id) AND file_no = \(file) AND chunk_no = \(chunk)", logger: logger)
        for try await data in rows.decode(ByteBuffer.self) { return data }
        return nil
    }

    // MARK: The worker's side

    /// Claims due exports, each leased for `lease`: queued ones, and running ones whose worker's
    /// lease ended (it died; the export starts again).
    package func claim(limit: Int, lease: Duration) async throws -> [Export] {
        let rows = try await client.query(
            """
            UPDATE fhir_exports SET status = 'running', attempts = attempts + 1,
                next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            WHERE id IN (
                SELECT id FROM fhir_exports WHERE status IN ('queued', 'running') AND next_attempt_at <= now() AND expires_at > now()
                ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)
        var claimed: [Export] = []
        for try await row in rows.decode(Self.Row.self) { claimed.append(Self.export(row)) }
        return claimed
    }

    /// Forgets what an earlier attempt wrote, so the export starts clean.
    package func clearFiles(of id: UUID) async throws {
        try await client.query("DELETE FROM fhir_export_files WHERE export_id = \(id)", logger: logger)
    }

    package func startFile(of id: UUID, number: Int, type: String) async throws {
        try await client.query(
            "INSERT INTO fhir_export_files (export_id, file_no, type) VALUES (\(id), \(number), \(type))", logger: logger)
    }

    /// Appends a chunk and counts what it holds into its file, and says how far the export is.
    package func append(
        _ data: ByteBuffer, to id: UUID, file: Int, chunk: Int, resources: Int, progress: String, lease: Duration
    ) async throws {
        let statement = AppendChunkStatement(
            id: id, file: file, chunk: chunk, data: data, resources: resources, progress: progress, leaseSeconds: lease.inSeconds)
        for try await _ in try await client.run(statement, pooling: pooling, logger: logger) {}
    }

    /// Drops a file that holds nothing (the manifest lists only files with resources).
    package func dropEmptyFile(of id: UUID, number: Int) async throws {
        try await client.query(
            "DELETE FROM fhir_export_files WHERE export_id = \(id) AND file_no = \(number) AND resources = 0", logger: logger)
    }

    /// Marks the export complete; its files are kept for `kept` from now.
    package func complete(_ id: UUID) async throws {
        try await client.query(
            """
            UPDATE fhir_exports SET status = 'complete', progress = NULL, completed_at = now(),
                expires_at = now() + make_interval(secs => \(Self.kept.inSeconds))
            WHERE id = \(id)
            """, logger: logger)
    }

    /// Records a failed attempt: tried again after `retryAfter`, or failed for good.
    package func fail(_ id: UUID, reason: String, retryAfter: Duration?) async throws {
        let status = retryAfter == nil ? Status.failed.rawValue : Status.queued.rawValue
        try await client.query(
            """
            UPDATE fhir_exports SET status = \(status), error = \(reason),
                next_attempt_at = now() + make_interval(secs => \((retryAfter ?? .zero).inSeconds))
            WHERE id = \(id)
            """, logger: logger)
    }

    /// Deletes exports past their expiry, with their files; how many.
    package func deleteExpired() async throws -> Int {
        let rows = try await client.query("DELETE FROM fhir_exports WHERE expires_at <= now() RETURNING id", logger: logger)
        var deleted = 0
        for try await _ in rows.decode(UUID.self) { deleted += 1 }
        return deleted
    }
}
