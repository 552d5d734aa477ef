import Foundation
import NIOCore
import PostgresNIO

/// The two statements behind every FHIR read, prepared so that PostgreSQL plans each once per
/// connection: a read is a few index lookups, and planning them afresh each time (as an unnamed
/// statement is planned) cost the database more than running them.

/// A bearer token's grant (`SMARTClientStore.grant`): asked by every request of the FHIR API.
struct GrantStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT t.client_id, t.study_key, t.scopes, t.expires_at, c.deidentified FROM smart_access_tokens t
        JOIN smart_clients c ON c.client_id = t.client_id
        WHERE t.token_sha256 = $1 AND t.expires_at > now() AND c.revoked_at IS NULL
        """
    static let bindingDataTypes: [PostgresDataType] = [.text]
    typealias Row = (String, String, String, Date, Bool)

    var tokenHash: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// One stored response of a study by its id (`FHIRStore.response`), its answers as stored text.
struct StoredResponseStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT p.number, r.activity_id, r.activity_version, r.activity_run_id, r.language, r.data::text, r.received_at
        FROM responses r JOIN participants p ON p.id = r.participant_id WHERE r.study_key = $1 AND r.id = $2
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .int8]
    typealias Row = (Int64, String, String, String?, String?, ByteBuffer, Date)

    var studyKey: String
    var id: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(studyKey)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
