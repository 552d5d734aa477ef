import Foundation
import HTTPTypes
import HummingbirdTesting
import JSONText
import Logging
import NIOCore
import StudyModels
import Testing
import TestSupport

/// `PUT /admin/v1/studies/{studyId}/draft/assessments/{identifier}` and
/// `GET /admin/v1/studies/{studyId}/assessments/{identifier}` with Sage's own assessments.
@Suite(.needsCluster) struct SageAssessmentAPITests {
    let helper = MetadataAdmin()
    let api = WCPApp()

    static let sage = Conformance.root.appendingPathComponent("sage")
    static let assessments = [
        ("assessment", sage.appendingPathComponent("examples/v2/AssessmentObject/AssessmentObject_0.json")),
        ("surveyA", sage.appendingPathComponent("README-extract/README_ExampleSurvey.json")),
    ]

    private func problems(_ body: ByteBuffer) throws -> [ValidationProblem] {
        try body.decodeJSON(MetadataAdmin.Problems.self).error.problems ?? []
    }

    @Test func sagesAssessmentsImportComeBackEqualAndOnlyWhatTheAppsCanRunIsServed() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
                .replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "SAGE""#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SAGE/draft", token: root, body: example).0 == .created)
            #expect(Self.assessments.count == 2)
            for (identifier, url) in Self.assessments {
                let text = try String(contentsOf: url, encoding: .utf8)
                let path = "/admin/v1/studies/SAGE/draft/assessments/\(identifier)"
                let (status, body) = try await helper.send(client, .put, path, token: root, body: text)
                #expect(status == .created, "\(identifier): \(String(buffer: body))")
                let result = try JSONDecoder().decode(AssessmentImportResult.self, from: Data(buffer: body))
                #expect(result.activityId == identifier)
                #expect(result.created)
                #expect(result.sageOnly.isEmpty == (identifier == "assessment"), "\(result.sageOnly)")
                // Read back as Sage's clients read it: the same document.
                let (read, readBody) = try await helper.send(client, .get, "/admin/v1/studies/SAGE/assessments/\(identifier)", token: root)
                #expect(read == .ok)
                #expect(try JSONValue.parse(Array(readBody.readableBytesView), budget: .studyDocument) == JSONValue.parse(Array(text.utf8), budget: .studyDocument))
                // Imported again: replaced, not added.
                let (again, againBody) = try await helper.send(client, .put, path, token: root, body: text)
                #expect(again == .ok)
                #expect(try JSONDecoder().decode(AssessmentImportResult.self, from: Data(buffer: againBody)).created == false)
            }
            let (launch, launchBody) = try await helper.send(client, .post, "/admin/v1/studies/SAGE/launch", token: root)
            #expect(launch == .ok, "\(String(buffer: launchBody))")
            let (_, list) = try await api.get(client, "/StudyMetaData/activityList?studyId=SAGE", WCPApp.headers(ios))
            let ids = ((list["activities"] as? [[String: Any]]) ?? []).compactMap { $0["activityId"] as? String }
            #expect(ids.contains("assessment"))
            #expect(!ids.contains("surveyA"), "a Sage-only activity is not offered")
            let (served, _) = try await api.get(client, "/StudyMetaData/activity?studyId=SAGE&activityId=surveyA&activityVersion=1.0", WCPApp.headers(ios))
            #expect(served.status != .ok)
        }
    }

    @Test func aBadAssessmentIsRefusedWithItsProblemsAndChangesNothing() async throws {
        try await helper.withService { client, root, url in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            let (_, before) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            let base = "/admin/v1/studies/SLEEPWELL/draft/assessments"
            let cases: [(path: String, body: String, status: HTTPResponse.Status, pointers: [String])] = [
                ("\(base)/a1", #"{"type": "assessment", "identifier": "a1", "steps": [{"type": "instruction""#, .unprocessableContent, [""]),
                ("\(base)/a1", #"{"type": "assessment", "identifier": "a2", "steps": [{"type": "instruction", "identifier": "i"}]}"#,
                 .unprocessableContent, ["/identifier"]),
                ("\(base)/a1", #"{"type": "assessment", "identifier": "a1", "steps": [{"type": "section", "identifier": "s", "steps": [{"type": "section", "identifier": "t", "steps": []}]}]}"#,
                 .unprocessableContent, ["/steps/0/steps/0/type"]),
                ("\(base)/a1", #"{"type": "assessment", "identifier": "a1", "steps": [{"type": "choiceQuestion", "identifier": "q"}]}"#,
                 .unprocessableContent, ["/steps/0"]),
                // An activity the study has, not made from an assessment, is not replaced.
                ("\(base)/daily", #"{"type": "assessment", "identifier": "daily", "steps": [{"type": "instruction", "identifier": "i"}]}"#,
                 .conflict, []),
                ("\(base)/DAILY", #"{"type": "assessment", "identifier": "DAILY", "steps": [{"type": "instruction", "identifier": "i"}]}"#,
                 .conflict, []),
                ("/admin/v1/studies/NOSUCH/draft/assessments/a1", #"{"type": "assessment", "identifier": "a1", "steps": [{"type": "instruction", "identifier": "i"}]}"#,
                 .notFound, []),
            ]
            #expect(cases.count == 7)
            for (path, body, status, pointers) in cases {
                let (got, reply) = try await helper.send(client, .put, path, token: root, body: body)
                #expect(got == status, "\(path) \(body): \(String(buffer: reply))")
                if !pointers.isEmpty { #expect(try problems(reply).map(\.pointer) == pointers, "\(body)") }
            }
            let (_, after) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(after == before)
            #expect(try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/assessments/a1", token: root).0 == .notFound)
            let events = try await TestDatabase.withClient(url: url) { postgres, _ in
                var count = 0
                for try await _ in try await postgres.query(
                    "SELECT id FROM audit_events WHERE action = 'study.assessment_imported'", logger: Logger(label: "test")
                ).decode(Int64.self) { count += 1 }
                return count
            }
            #expect(events == 0)
        }
    }

    @Test func onlyAnEditorImportsAndAViewerReads() async throws {
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root,
                                      body: try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8))
            let (adminId, token) = try await helper.makeAdmin(client, root: root, email: "viewer@studystack.test")
            #expect(try await helper.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(adminId)", token: root, body: #"{"role": "viewer"}"#).0 == .ok)
            let text = try String(contentsOf: Self.assessments[0].1, encoding: .utf8)
            let path = "/admin/v1/studies/SLEEPWELL/draft/assessments/assessment"
            #expect(try await helper.send(client, .put, path, token: token, body: text).0 == .forbidden)
            #expect(try await helper.send(client, .put, path, token: root, body: text).0 == .created)
            #expect(try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/assessments/assessment", token: token).0 == .ok)
        }
    }
}
