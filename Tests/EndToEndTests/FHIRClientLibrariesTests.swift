import Foundation
import JSONText
import Testing
import TestSupport

/// Two FHIR clients from PyPI read a launched study end to end (`scripts/fhir-clients.py`):
/// fhirclient, SMART's own Python client, through its backend-services flow and its R4 models,
/// which refuse a resource that does not fit them; and fhirpy, paging through every page of a
/// search by its next links and asking `_include`. Each gets its token with an assertion signed
/// by PyJWT and cryptography.
@Suite(.needsCluster) struct FHIRClientLibrariesTests {
    @Test func fhirclientAndFhirpyReadTheStudy() async throws {
        try await Platform.run { platform in
            let keys = FileManager.default.temporaryDirectory.appendingPathComponent("clients-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: keys) }
            let jwks = try JSONSerialization.jsonObject(
                with: try await ChildProcess.runInTask(TestEnvironment.toolsPython, [SMARTBackendServicesTests.script, "keygen", keys.path]))
            let registered = try await platform.admin.send(
                .POST, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/fhir-clients", json: ["name": "Clinic tools", "jwks": jwks])
            let clientId = try #require(registered.json?["clientId"]?.string, "\(registered.text)")

            // Three participants; the first two answer the daily survey.
            var appTokens: [String] = []
            for (index, kind) in [(0, MyStudiesApp.Kind.ios), (1, .android), (2, .ios)] {
                let enrolled = try await platform.app(kind).response(
                    "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[index]), ("allowDataSharing", "true")])
                appTokens.append(try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)"))
            }
            #expect(appTokens.count == 3)
            for (index, kind) in [(0, MyStudiesApp.Kind.ios), (1, .android)] {
                let sent = try await platform.app(kind).processResponse(
                    JourneyResponses.dailyResponse(participant: appTokens[index], name: "daily", version: "1.0"))
                #expect(sent.status == 200)
            }
            _ = try await eventually("both responses processed", within: .seconds(60)) {
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 2 && responses.allSatisfy { $0["status"]?.string == "processed" } ? responses : nil
            }

            let output = try await ChildProcess.runInTask(TestEnvironment.toolsPython, [
                ServiceProcess.packageRoot.appendingPathComponent("scripts/fhir-clients.py").path, platform.response.baseURL + "/fhir/r4",
                clientId, keys.appendingPathComponent("es384.pem").path, "es384-1", "ES384", "DEMOSTUDY",
            ])
            let read = try JSONValue.parse(Array(output), budget: .studyDocument)
            print("fhir-clients.py: \(read.serialized())")
            let fhirclient = try #require(read["fhirclient"])
            #expect(fhirclient["status"]?.string == "active")
            #expect(fhirclient["study"]?.string?.isEmpty == false)
            #expect(fhirclient["patients"]?.integer == 3, "paged one at a time: \(fhirclient)")
            #expect(fhirclient["subjects"]?.integer == 3)
            #expect(fhirclient["responses"]?.integer == 2)
            #expect(fhirclient["questionnaires"]?.integer == 1, "both answered daily 1.0: \(fhirclient)")
            #expect(fhirclient["answersNameTheirQuestionnairesItems"]?.bool == true)
            let fhirpy = try #require(read["fhirpy"])
            #expect(fhirpy["patients"]?.integer == 3, "every page followed: \(fhirpy)")
            #expect(fhirpy["patientIds"]?.array?.count == 3)
            #expect(fhirpy["responses"]?.integer == 2)
            #expect(fhirpy["firstPage"]?.array?.compactMap(\.string) == ["match:QuestionnaireResponse", "include:Patient"])
            #expect((fhirpy["activeQuestionnaires"]?.integer ?? 0) >= 1)
        }
    }
}
