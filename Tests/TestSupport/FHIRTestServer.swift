import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore

/// A FHIR R4 server for tests (`scripts/fhir-server.py`): transactions with conditional creates,
/// reads and searches, HTTP Basic, every Bundle validated by fhir.resources and fhirpathpy
/// before it is taken. `make test` prepares the Python it runs on.
public final class FHIRTestServer: Sendable {
    public let username: String
    public let password: String
    private let server: ScriptServer

    public var port: Int { server.port }
    public var base: String { "http://127.0.0.1:\(port)/fhir" }

    /// Starts the server on a free port of 127.0.0.1.
    public init() throws {
        let (username, password) = ("fhir-forwarder", "fhir-Passw0rd")
        (self.username, self.password) = (username, password)
        server = try ScriptServer(python: TestEnvironment.toolsPython, script: "fhir-server.py", name: "FHIR test server") { _ in [username, password] }
    }

    /// Closes its input, which ends it.
    public func stop() { server.stop() }

    /// What it holds: `counts`, `created` and `matched` by type, `failures` (each refused
    /// Bundle's problems), `transactions`, `attempts`.
    public func state() async throws -> JSONValue {
        try await get("http://127.0.0.1:\(port)/_state", authorised: false)
    }

    /// A search (`QuestionnaireResponse?identifier=...`), as the searchset Bundle it answers.
    public func search(_ query: String) async throws -> JSONValue {
        try await get("\(base)/\(query)", authorised: true)
    }

    /// The next transactions are answered with `statuses`, in order.
    public func failNext(_ statuses: [Int]) async throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/_fail")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: #"{"statuses": [\#(statuses.map(String.init).joined(separator: ","))]}"#))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    private func get(_ url: String, authorised: Bool) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        if authorised {
            request.headers.add(name: "Authorization", value: "Basic " + Data("\(username):\(password)".utf8).base64EncodedString())
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return try JSONValue.parse(body.readableBytesView, budget: .init(maxBytes: 64 << 20, maxNodes: 10_000_000, maxDepth: 64))
    }
}
