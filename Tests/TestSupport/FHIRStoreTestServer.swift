import AsyncHTTPClient
import Foundation
import JSONText
import Synchronization

/// The Cloud Healthcare API's FHIR REST API for searching a store's `QuestionnaireResponse`
/// resources and reading a `Questionnaire` version (`scripts/fhir-store-server.py`), holding the
/// resources a test gives it, for reading a MyStudies 2.x deployment that kept its responses in a
/// FHIR store. The Healthcare API cannot be reached from here; the server speaks its wire form
/// (search bundles with `next` links, OperationOutcome and Google's error bodies).
public final class FHIRStoreTestServer: Sendable {
    public let project = "mystudies-data"
    public let location = "us-east1"
    public let token = "ya29.test-\(UUID().uuidString)"
    public let port: Int
    private let directory: URL
    private let process: Mutex<ChildProcess?>

    public var base: String { "http://127.0.0.1:\(port)" }

    /// The store path MyStudies' response server writes a study's responses to.
    public func store(of studyId: String) -> String {
        "projects/\(project)/locations/\(location)/datasets/\(studyId)/fhirStores/FHIR_\(studyId)"
    }

    /// Starts the server with each study's `QuestionnaireResponse` resources and the
    /// `Questionnaire` versions they point to (`"id/versionId"`); `nextBase`, when given, is where
    /// its `next` links point instead of itself.
    public init(studies: [String: (responses: [JSONValue], questionnaires: [String: JSONValue])], nextBase: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-fhir-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var stores: [(String, JSONValue)] = []
        for (studyId, content) in studies {
            let path = "projects/\(project)/locations/\(location)/datasets/\(studyId)/fhirStores/FHIR_\(studyId)"
            stores.append((path, .object(JSONObject(pairs: [
                ("QuestionnaireResponse", .array(content.responses)), ("Questionnaire", .object(JSONObject(pairs: content.questionnaires.map { ($0.key, $0.value) }))),
            ]))))
        }
        var top: [(String, JSONValue)] = [("stores", .object(JSONObject(pairs: stores)))]
        if let nextBase { top.append(("nextBase", .string(nextBase))) }
        let file = directory.appendingPathComponent("resources.json")
        try Data(JSONValue.object(JSONObject(pairs: top)).serialized().utf8).write(to: file)
        let (process, port) = try ScriptServer.start(
            python: "python3", script: "fhir-store-server.py", arguments: [token, project, file.path], in: directory,
            name: "FHIR store test server", timeout: .seconds(30))
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

    /// The paths of the requests it was sent, in order.
    public func requests() async throws -> [String] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/_requests"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        let reply = try JSONValue.parse(body.readableBytesView, budget: .init(maxBytes: 16 << 20, maxNodes: 1_000_000))
        return reply["requests"]?.array?.compactMap(\.string) ?? []
    }
}
