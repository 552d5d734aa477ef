import Foundation
import JSONText
import ServiceKit
import Testing
import TestSupport

extension SMARTBackendServicesTests {
    /// What `scripts/fhir-validate.py` says of resources given one per line.
    static func validated(_ resources: [Data]) async throws -> String {
        let output = try await ChildProcess.runInTask(
            TestEnvironment.toolsPython, [ServiceProcess.packageRoot.appendingPathComponent("scripts/fhir-validate.py").path, "-"],
            input: Data(resources.map { $0 + Data("\n".utf8) }.joined()))
        return String(decoding: output, as: UTF8.self)
    }

    /// The study's questionnaires, one per published activity version: the version a response
    /// answered resolves from the response's `questionnaire`; a publish that changes the activity
    /// adds its next version and retires the one before; each is read, and its history has one
    /// version. The ResearchStudy lists the study's versions. Four reads and four searches, audited.
    static func questionnairesFollowPublishedVersions(_ platform: Platform, token: String, answered: JSONValue) async throws {
        let fhir = platform.response.baseURL + "/fhir/r4"
        func get(_ path: String) async throws -> Wire.Reply {
            try await Wire.send(.GET, fhir + path, headers: [("Authorization", "Bearer \(token)")])
        }
        let canonical = try #require(answered["questionnaire"]?.string)
        let parts = canonical.split(separator: "|").map(String.init)
        #expect(parts.count == 2 && parts[1] == "1.0", "\(canonical)")
        let encodedURL = parts[0].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? parts[0]

        let all = try await get("/Questionnaire?_summary=count")
        let before = try #require(all.json?["total"]?.integer, "\(all.text)")
        #expect(before >= 1, "\(all.text)")
        let exact = try await get("/Questionnaire?url=\(encodedURL)&version=1.0")
        #expect(exact.status == 200, "\(exact.text)")
        let found = exact.json?["entry"]?.array ?? []
        #expect(found.count == 1, "\(exact.text)")
        let first = try #require(found.first?["resource"])
        #expect(first["url"]?.string == parts[0] && first["version"]?.string == "1.0")
        #expect(first["status"]?.string == "active")
        let linkIds = Set((first["item"]?.array ?? []).compactMap { $0["linkId"]?.string })
        let answeredIds = (answered["item"]?.array ?? []).compactMap { $0["linkId"]?.string }
        #expect(!answeredIds.isEmpty && answeredIds.allSatisfy(linkIds.contains), "every answer names an item of its questionnaire")

        // A publish that changes the activity: version 1.1 is active, 1.0 retired and still read.
        let published = try await MendedDesignTests.publish(platform.admin, try await MendedDesignTests.dailyDraft(platform.admin, dateKind: "Date-Time"))
        #expect(published.status == 200, "\(published.text)")
        let versions = try await get("/Questionnaire?url=\(encodedURL)")
        let listed = (versions.json?["entry"]?.array ?? []).compactMap { $0["resource"] }
        #expect(listed.count == 2, "\(versions.text)")
        #expect(listed.map { $0["version"]?.string ?? "" } == ["1.0", "1.1"])
        #expect(listed.map { $0["status"]?.string ?? "" } == ["retired", "active"])
        let id = try #require(listed.first?["id"]?.string)
        let read = try await get("/Questionnaire/\(id)")
        #expect(read.status == 200 && read.json?["version"]?.string == "1.0", "\(read.text)")
        let history = try await get("/Questionnaire/\(id)/_history")
        #expect(history.json?["type"]?.string == "history" && history.json?["entry"]?.array?.count == 1, "\(history.text)")
        let version = try await get("/Questionnaire/\(id)/_history/1")
        #expect(version.status == 200 && version.json?["id"]?.string == id)
        #expect(try await get("/Questionnaire/\(id)/_history/2").status == 404)
        #expect(try await get("/Questionnaire/0123456789abcdef0123456789abcdef").status == 404)
        let active = try await get("/Questionnaire?status=active&_summary=count")
        #expect(active.json?["total"]?.integer == before, "one active version per activity: \(active.text)")

        let study = try await get("/ResearchStudy/DEMOSTUDY")
        let studyVersions = (study.json?["extension"]?.array ?? []).compactMap { $0["valueString"]?.string }
        #expect(studyVersions == ["1.0", "1.1"], "\(study.text)")
        #expect(study.json?["title"]?.string?.isEmpty == false, "\(study.text)")

        let checked = try await validated([exact.body, versions.body, read.body, history.body, study.body])
        #expect(checked.contains("checked 5 resources"), "\(checked)")
        #expect(checked.contains(", 0 failures"), "\(checked)")
    }
}
