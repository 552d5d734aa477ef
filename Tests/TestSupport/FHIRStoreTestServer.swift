import AsyncHTTPClient
import Foundation
import JSONText

/// The Cloud Healthcare API's FHIR REST API for searching a store's `QuestionnaireResponse`
/// resources and reading a `Questionnaire` version (`scripts/fhir-store-server.py`), holding the
/// resources a test gives it, for reading a MyStudies 2.x deployment that kept its responses in a
/// FHIR store. The Healthcare API cannot be reached from here; the server speaks its wire form
/// (search bundles with `next` links, OperationOutcome and Google's error bodies).
public final class FHIRStoreTestServer: Sendable {
    public let project: String
    public let location: String
    public let token: String
    private let server: ScriptServer

    public var port: Int { server.port }
    public var base: String { "http://127.0.0.1:\(port)" }

    /// The store path MyStudies' response server writes a study's responses to.
    public func store(of studyId: String) -> String {
        "projects/\(project)/locations/\(location)/datasets/\(studyId)/fhirStores/FHIR_\(studyId)"
    }

    /// Starts the server with each study's `QuestionnaireResponse` resources and the
    /// `Questionnaire` versions they point to (`"id/versionId"`); `nextBase`, when given, is where
    /// its `next` links point instead of itself.
    public init(studies: [String: (responses: [JSONValue], questionnaires: [String: JSONValue])], nextBase: String? = nil) throws {
        let (token, project, location) = ("ya29.test-\(UUID().uuidString)", "mystudies-data", "us-east1")
        (self.token, self.project, self.location) = (token, project, location)
        var stores: [(String, JSONValue)] = []
        for (studyId, content) in studies {
            let path = "projects/\(project)/locations/\(location)/datasets/\(studyId)/fhirStores/FHIR_\(studyId)"
            stores.append((path, .object(JSONObject(pairs: [
                ("QuestionnaireResponse", .array(content.responses)), ("Questionnaire", .object(JSONObject(pairs: content.questionnaires.map { ($0.key, $0.value) }))),
            ]))))
        }
        var top: [(String, JSONValue)] = [("stores", .object(JSONObject(pairs: stores)))]
        if let nextBase { top.append(("nextBase", .string(nextBase))) }
        let resources = JSONValue.object(JSONObject(pairs: top)).serialized()
        server = try ScriptServer(python: "python3", script: "fhir-store-server.py", name: "FHIR store test server", timeout: .seconds(30)) {
            [token, project] directory in
            let file = directory.appendingPathComponent("resources.json")
            try Data(resources.utf8).write(to: file)
            return [token, project, file.path]
        }
    }

    /// Closes its input, which ends it.
    public func stop() { server.stop() }

    /// The paths of the requests it was sent, in order.
    public func requests() async throws -> [String] { try await server.requests() }
}
