import AsyncHTTPClient
import Foundation
import JSONText
import Synchronization

/// Cloud Firestore's REST API for listing documents (`scripts/firestore-server.py`), holding the
/// documents a test gives it, for reading a MyStudies 2.x deployment's stored responses. Firestore
/// cannot be reached from here and its emulator is not packaged for Debian; the server speaks
/// the API's wire form (typed values, pages with opaque tokens, Google's error bodies).
public final class FirestoreTestServer: Sendable {
    public let project = "mystudies-data"
    public let token = "ya29.test-\(UUID().uuidString)"
    public let port: Int
    private let directory: URL
    private let process: Mutex<ChildProcess?>

    public var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server with `collections`: each collection path's documents, each an object with
    /// `id` and its fields as plain JSON (written as Firestore's typed values, as its Java client
    /// writes a `Map<String, Object>`), and a `createTime`.
    public init(collections: [String: [(id: String, fields: JSONValue, createTime: String)]]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-firestore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var pairs: [(String, JSONValue)] = []
        for (path, documents) in collections {
            pairs.append((path, .array(documents.map { document in
                .object(JSONObject(pairs: [
                    ("id", .string(document.id)), ("fields", Self.typed(fields: document.fields)),
                    ("createTime", .string(document.createTime)), ("updateTime", .string(document.createTime)),
                ]))
            })))
        }
        let documentsFile = directory.appendingPathComponent("documents.json")
        try Data(JSONValue.object(JSONObject(pairs: pairs)).serialized().utf8).write(to: documentsFile)
        let (process, port) = try ScriptServer.start(
            python: "python3", script: "firestore-server.py", arguments: [token, project, documentsFile.path], in: directory,
            name: "Firestore test server", timeout: .seconds(30))
        self.port = port
        self.process = Mutex(process)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Closes its input, which ends it.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        process.closeInput()
        if process.wait(within: .seconds(5)) == nil { process.kill() }
    }

    /// The paths of the document requests it was sent, in order.
    public func requests() async throws -> [String] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/_requests"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        let reply = try JSONValue.parse(body.readableBytesView, budget: .init(maxBytes: 16 << 20, maxNodes: 1_000_000))
        return reply["requests"]?.array?.compactMap(\.string) ?? []
    }

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
