import Foundation
import NIOCore
import PostgresNIO

/// Appends one chunk of an export's file, counts what it holds into the file, and renews the
/// export's lease and progress: one statement, so one round trip for each of a large export's
/// chunks. Prepared, so that the server plans it once per connection: planned with its values
/// (an unnamed statement is), the chunk's megabytes were copied into the plan and through it
/// several times, which cost the database more than storing them.
///
/// Its commit does not wait for the WAL to reach the disk (`settings`, for this transaction
/// alone): `FHIRExportStore.complete` commits synchronously, after every chunk in the WAL, so an
/// export is never complete with a chunk lost; a crash before that ends the export's lease and
/// it is written again from the start.
struct AppendChunkStatement: PostgresPreparedStatement {
    static let sql = """
        WITH settings AS (
            SELECT set_config('synchronous_commit', 'off', true)
        ), chunk AS (
            INSERT INTO fhir_export_chunks (export_id, file_no, chunk_no, data) VALUES ($1, $2, $3, $4)
        ), counted AS (
            UPDATE fhir_export_files SET resources = resources + $5, bytes = bytes + length($4)
            WHERE export_id = $1 AND file_no = $2
        )
        UPDATE fhir_exports SET progress = $6, next_attempt_at = now() + make_interval(secs => $7)
        FROM settings
        WHERE id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .int4, .int4, .bytea, .int8, .text, .float8]
    typealias Row = Void

    var id: UUID
    var file: Int
    var chunk: Int
    var data: ByteBuffer
    var resources: Int
    var progress: String
    var leaseSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(id)
        bindings.append(Int32(clamping: file))
        bindings.append(Int32(clamping: chunk))
        bindings.append(data)
        bindings.append(Int64(resources))
        bindings.append(progress)
        bindings.append(leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
