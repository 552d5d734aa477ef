import AsyncHTTPClient
import Foundation
import JSONText

/// Cloud Firestore's REST API for listing documents (`scripts/firestore-server.py`), holding the
/// documents a test gives it, for reading a MyStudies 2.x deployment's stored responses. Firestore
/// cannot be reached from here and its emulator is not packaged for Debian; the server speaks
/// the API's wire form (typed values, pages with opaque tokens, Google's error bodies).
public final class FirestoreTestServer: Sendable {
    public let project: String
    public let token: String
    private let server: ScriptServer

    public var port: Int { server.port }
    public var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server with `collections`: each collection path's documents, each an object with
    /// `id` and its fields as plain JSON (written as Firestore's typed values, as its Java client
    /// writes a `Map<String, Object>`), and a `createTime`.
    public init(collections: [String: [(id: String, fields: JSONValue, createTime: String)]]) throws {
        let (token, project) = ("ya29.test-\(UUID().uuidString)", "mystudies-data")
        (self.token, self.project) = (token, project)
        var pairs: [(String, JSONValue)] = []
        for (path, documents) in collections {
            pairs.append((path, .array(documents.map { document in
                .object(JSONObject(pairs: [
                    ("id", .string(document.id)), ("fields", Self.typed(fields: document.fields)),
                    ("createTime", .string(document.createTime)), ("updateTime", .string(document.createTime)),
                ]))
            })))
        }
        let documents = JSONValue.object(JSONObject(pairs: pairs)).serialized()
        server = try ScriptServer(python: "python3", script: "firestore-server.py", name: "Firestore test server", timeout: .seconds(30)) {
            [token, project] directory in
            let file = directory.appendingPathComponent("documents.json")
            try Data(documents.utf8).write(to: file)
            return [token, project, file.path]
        }
    }

    /// Closes its input, which ends it.
    public func stop() { server.stop() }

    /// The paths of the document requests it was sent, in order.
    public func requests() async throws -> [String] { try await server.requests() }

    /// Plain JSON as the Firestore Java client writes a `Map<String, Object>`'s values: text,
    /// booleans, whole numbers as `integerValue` (text), other numbers as `doubleValue`, lists,
    /// maps, null.
    public static func typed(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null: .object(["nullValue": .null])
        case .bool: .object(["booleanValue": value])
        case .string: .object(["stringValue": value])
        case .number(let number):
            if let integer = Int64(exactly: number.double), number.isExactDouble, number.double.rounded() == number.double {
                .object(["integerValue": .string(String(integer))])
            } else {
                .object(["doubleValue": value])
            }
        case .array(let items): .object(["arrayValue": .object(["values": .array(items.map { typed($0) })])])
        case .object: .object(["mapValue": .object(["fields": typed(fields: value)])])
        }
    }

    public static func typed(fields: JSONValue) -> JSONValue {
        guard case .object(let members) = fields else { return .object([:]) }
        return .object(JSONObject(pairs: members.map { ($0.key, typed($0.value)) }))
    }
}
