import Foundation
import JSONText
import ServiceKit
import Testing
import TestSupport

/// Two FHIR clients from PyPI read a launched study end to end (`scripts/fhir-clients.py`):
/// fhirclient, SMART's own Python client, through its backend-services flow and its R4 models,
/// which refuse a resource that does not fit them; and fhirpy, paging through every page of a
/// search by its next links and asking `_include`. Each gets its token with an assertion signed
/// by PyJWT and cryptography. A participant's consent and kick count are read too, through the
/// same models.
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

            // Three participants; the first two answer the daily survey. The first signs up and
            // consents (sharing their data) as the iOS app does, and counts kicks.
            let signed = try await FHIRConsentTests.participant(platform, .ios, email: "clients@example.org", token: platform.tokens[0])
            try await FHIRConsentTests.join(signed.app, signed.appToken)
            try await FHIRConsentTests.sign(signed.app, version: "1.0", pdf: FHIRConsentTests.samPDF, sharing: "true")
            #expect(try await signed.app.processResponse(try JourneyResponses.kickResponse(participant: signed.appToken)).status == 200)
            var appTokens = [signed.appToken]
            for (index, kind) in [(1, MyStudiesApp.Kind.android), (2, .ios)] {
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
            _ = try await eventually("the three responses processed", within: .seconds(60)) {
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 3 && responses.allSatisfy { $0["status"]?.string == "processed" } ? responses : nil
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
            #expect(fhirclient["responses"]?.integer == 3)
            #expect(fhirclient["questionnaires"]?.integer == 2, "daily 1.0, answered twice, and kicks 1.0: \(fhirclient)")
            #expect(fhirclient["answersNameTheirQuestionnairesItems"]?.bool == true)
            #expect(fhirclient["consents"]?.array?.compactMap(\.string) == ["active:permit"], "\(fhirclient)")
            #expect(fhirclient["kicksCounted"]?.array?.compactMap(\.integer) == [33], "\(fhirclient)")
            let fhirpy = try #require(read["fhirpy"])
            #expect(fhirpy["patients"]?.integer == 3, "every page followed: \(fhirpy)")
            #expect(fhirpy["patientIds"]?.array?.count == 3)
            #expect(fhirpy["responses"]?.integer == 3)
            #expect(fhirpy["firstPage"]?.array?.compactMap(\.string) == ["match:QuestionnaireResponse", "include:Patient"])
            #expect((fhirpy["activeQuestionnaires"]?.integer ?? 0) >= 1)
            #expect(fhirpy["observationPage"]?.array?.compactMap(\.string) == ["match:Observation", "include:Patient"], "\(fhirpy)")
        }
    }
}
