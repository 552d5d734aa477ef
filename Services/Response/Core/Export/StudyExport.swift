import Foundation
import StudyModels
import Logging
import NIOCore
import PostgresNIO
import ServiceKit

/// A study's tables for its researchers, every participant's rows, read in one repeatable-read
/// transaction (the tables agree with each other) and streamed: rows go out in chunks as
/// PostgreSQL sends them, so a large study never sits in memory.
///
/// Values come from PostgreSQL as JSON (`to_json`): numbers and booleans as written, dates as
/// ISO 8601 with their offset, text as itself.
package struct StudyExport: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// How much is gathered before it is written to the client.
    package static let chunkSize = 64 * 1024

    /// Rows read per query, in `Key` order: a table's first page is small and each next one twice
    /// the last, up to `pageRows`, so the download's first bytes go out at once and a download
    /// cancelled right away costs a few small pages (the server learns of it only when a write
    /// fails, a page or two later).
    package static let firstPageRows = 20
    package static let pageRows = 1_000

    package enum Format {
        /// One `<table>.csv` per table in a zip.
        case csvZip
        /// One `{"table": ..., "row": {...}}` object per line.
        case jsonLines
    }

    /// Writes the export to `sink`, chunk by chunk.
    package func write(
        _ catalog: QueryTranslator.Catalog, studyKey: String, as format: Format, to sink: (ByteBuffer) async throws -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.withReadOnlySnapshot(logger: logger) { connection in
                var archive = ZipStreamWriter()
                var buffer: [UInt8] = []
                buffer.reserveCapacity(Self.chunkSize * 2)
                var counts: [Int] = []
                func flush() async throws {
                    guard !buffer.isEmpty else { return }
                    if format == .csvZip { try archive.account(buffer) }
                    try await sink(ByteBuffer(bytes: buffer))
                    buffer.removeAll(keepingCapacity: true)
                }
                for table in catalog.orderedTables {
                    let names = table.columns.map(\.name)
                    switch format {
                    case .csvZip:
                        try await sink(ByteBuffer(bytes: archive.startFile(Self.fileName(table.name))))
                        buffer += Array((names.map(Self.csvField).joined(separator: ",") + "\r\n").utf8)
                    case .jsonLines:
                        // Each table's line of columns comes before its rows, so an empty table is in
                        // the export too, and a reader knows every column's type. Sent at once, as
                        // the zip's file header is: the download starts before the first page is read.
                        buffer += Array("\(Self.describe(table))\n".utf8)
                        try await flush()
                    }
                    let keys = names.map { Array(Self.jsonString($0).utf8) }
                    let tableKey = Array(Self.jsonString(table.name).utf8)
                    let text = table.columns.map { $0.storage == "VARCHAR" }
                    // Each page's rows go out when it ends (the first page's too), and within a
                    // page every chunk.
                    let count = try await eachRow(of: table, schema: catalog.schema, on: connection, pageEnded: flush) { values in
                        switch format {
                        case .csvZip: ExportLines.appendCSVLine(values: values, text: text, to: &buffer)
                        case .jsonLines: ExportLines.appendJSONLine(table: tableKey, keys: keys, values: values, to: &buffer)
                        }
                        if buffer.count >= Self.chunkSize { try await flush() }
                    }
                    try await flush()
                    if format == .csvZip { try await sink(ByteBuffer(bytes: archive.finishFile())) }
                    counts.append(count)
                }
                // The study's Sage result archives, listed (their files are downloaded one by one).
                let archives = try await sageArchives(studyKey: studyKey, on: connection)
                if !archives.isEmpty {
                    switch format {
                    case .csvZip:
                        var lines = Self.sageArchiveColumns.joined(separator: ",") + "\r\n"
                        for row in archives { lines += row.text.map { Self.csvField($0 ?? "") }.joined(separator: ",") + "\r\n" }
                        let bytes = Array(lines.utf8)
                        try await sink(ByteBuffer(bytes: archive.startFile(Self.sageArchivesName)))
                        try archive.account(bytes)
                        try await sink(ByteBuffer(bytes: bytes))
                        try await sink(ByteBuffer(bytes: archive.finishFile()))
                    case .jsonLines:
                        let keys = Self.sageArchiveColumns.map(Self.jsonString)
                        let lines = archives.map { row in
                            "{\"sageArchive\":{" + zip(keys, row.json).map { "\($0):\($1)" }.joined(separator: ",") + "}}\n"
                        }
                        try await sink(ByteBuffer(bytes: Array(lines.joined().utf8)))
                    }
                }
                if format == .csvZip {
                    // Last, as the rows are counted on the way: every table's file, columns and rows.
                    let manifest = Array(Self.manifest(catalog.orderedTables, rows: counts, sageArchives: archives.count).utf8)
                    try await sink(ByteBuffer(bytes: archive.startFile(Self.manifestName)))
                    try archive.account(manifest)
                    try await sink(ByteBuffer(bytes: manifest))
                    try await sink(ByteBuffer(bytes: archive.finishFile()))
                    try await sink(ByteBuffer(bytes: try archive.finish()))
                }
            }
        }
    }

    /// Calls `body` with every row of `table`, in `Key` order, each as its columns' values written
    /// as JSON (the cells' bytes as PostgreSQL sent them, nil for NULL); returns how many there
    /// were.
    ///
    /// In pages by `Key` rather than one query for the table: asked for every row at once,
    /// PostgreSQL sorts the whole table (every value written as JSON first) before it sends the
    /// first, and the download waits seconds to start; a page of the key's index starts at once,
    /// and a cancelled download stops within a page.
    private func eachRow(
        of table: QueryTranslator.Catalog.Table, schema: String, on connection: PostgresConnection,
        pageEnded: () async throws -> Void, _ body: ([ByteBuffer?]) async throws -> Void
    ) async throws -> Int {
        let columns = table.columns.map { $0.jsonSQL(alias: "t") }
        let select = "SELECT t.\"Key\", \(columns.joined(separator: ", ")) FROM \(SQLName.quoted(schema)).\(SQLName.quoted(table.sqlName)) t"
        var count = 0
        var after: Int64?
        var pageRows = 0
        var limit = Self.firstPageRows
        repeat {
            var binds = PostgresBindings()
            var continuing = ""
            if let after {
                limit = min(2 * limit, Self.pageRows)
                binds.append(after)
                continuing = " WHERE t.\"Key\" > $1"
            }
            let query = PostgresQuery(unsafeSQL: select + continuing + " ORDER BY t.\"Key\" LIMIT \(limit)", binds: binds)
            pageRows = 0
            for try await row in try await connection.query(query, logger: logger) {
                var cells = row.makeIterator()
                after = try cells.next()?.decode(Int64.self)
                var values: [ByteBuffer?] = []
                values.reserveCapacity(table.columns.count)
                while let cell = cells.next() { values.append(cell.bytes) }
                pageRows += 1
                try await body(values)
            }
            count += pageRows
            try await pageEnded()
        } while pageRows == limit
        return count
    }

    /// The zip's description of itself, after the tables' files.
    package static let manifestName = "manifest.json"

    /// A table as the exports describe it: `{"table", "parent", "columns": [{"name", "type",
    /// "maxLength"}]}` (types as the data grids show them).
    static func describe(_ table: QueryTranslator.Catalog.Table, file: String? = nil, rows: Int? = nil) -> String {
        let columns = table.columns.map { column in
            "{\"name\":\(jsonString(column.name)),\"type\":\"\(column.typeName)\""
                + (column.maxLength.map { ",\"maxLength\":\($0)" } ?? "") + "}"
        }
        var members = ["\"table\":\(jsonString(table.name))", "\"parent\":\(table.parent.map(jsonString) ?? "null")"]
        if let file { members.append("\"file\":\(jsonString(file))") }
        if let rows { members.append("\"rows\":\(rows)") }
        members.append("\"columns\":[\(columns.joined(separator: ","))]")
        return "{" + members.joined(separator: ",") + "}"
    }

    /// `manifest.json`: `{"tables": [...]}`, each as `describe` writes it with its file and rows,
    /// and `"sageArchives": {"file", "rows"}` when the study has received any.
    static func manifest(_ tables: [QueryTranslator.Catalog.Table], rows: [Int], sageArchives: Int = 0) -> String {
        let items = zip(tables, rows).map { describe($0, file: fileName($0.name), rows: $1) }
        let archives = sageArchives == 0 ? "" : ",\"sageArchives\":{\"file\":\"\(sageArchivesName)\",\"rows\":\(sageArchives)}"
        return "{\"tables\":[\(items.joined(separator: ","))]\(archives)}\n"
    }

    /// The list of the study's Sage result archives in the zip, beside its tables.
    package static let sageArchivesName = "sage_archives.csv"
    package static let sageArchiveColumns = [
        "ArchiveId", "ParticipantId", "AssessmentId", "ActivityVersion", "TaskRunUUID", "Bytes", "Sealed", "SHA256", "Files", "ReceivedAt",
    ]

    /// One archive's line, in `sageArchiveColumns` order: as the CSV's cells, and as JSON values
    /// typed as the admin API types them (the participant and the size as numbers, `Sealed` a
    /// boolean, `Files` the list of names, which the CSV joins with spaces).
    struct SageArchiveLine {
        var text: [String?]
        var json: [String]
    }

    /// Each of the study's archives, oldest first.
    private func sageArchives(studyKey: String, on connection: PostgresConnection) async throws -> [SageArchiveLine] {
        let rows = try await connection.query(
            """
            SELECT a.archive_id::text, p.number, a.assessment_id, a.activity_version, a.task_run_uuid,
                   a.byte_count, a.sealed, a.sha256,
                   (SELECT string_agg(f->>'name', ' ' ORDER BY n) FROM jsonb_array_elements(a.files) WITH ORDINALITY AS e(f, n)),
                   (SELECT COALESCE(jsonb_agg(f->'name' ORDER BY n), '[]'::jsonb)::text
                    FROM jsonb_array_elements(a.files) WITH ORDINALITY AS e(f, n)),
                   to_json(a.received_at)#>>'{}'
            FROM sage_archives a JOIN participants p ON p.id = a.participant_id WHERE a.study_key = \(studyKey) ORDER BY a.id
            """, logger: logger)
        var found: [SageArchiveLine] = []
        for try await (id, participant, assessment, version, run, bytes, sealed, sha256, files, fileList, received) in rows.decode(
            (String, Int64, String, String, String?, Int64, Bool, String, String?, String, String).self)
        {
            let text: [String?] = [id, String(participant), assessment, version, run, String(bytes), String(sealed), sha256, files, received]
            var json = text.map { $0.map(Self.jsonString) ?? "null" }
            json[1] = String(participant)
            json[5] = String(bytes)
            json[6] = String(sealed)
            json[8] = fileList
            found.append(SageArchiveLine(text: text, json: json))
        }
        return found
    }

    /// A table's file name in the zip: its name with anything a file system might object to
    /// replaced.
    package static func fileName(_ table: String) -> String {
        String(table.map { $0.isLetter || $0.isNumber || "-_. ".contains($0) ? $0 : "_" }) + ".csv"
    }

    package static func jsonString(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    /// A JSON value as a CSV field (`ExportLines.appendCSVValue`).
    package static func csvValue(_ json: String?, text: Bool) -> String {
        guard let json else { return "" }
        var out: [UInt8] = []
        ExportLines.appendCSVValue(Array(json.utf8), text: text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    package static func csvField(_ value: String) -> String {
        var out: [UInt8] = []
        ExportLines.appendCSVField(value.utf8, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
