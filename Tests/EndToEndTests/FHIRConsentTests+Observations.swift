import FHIR
import Foundation
import JSONText
import Testing
import TestSupport

extension FHIRConsentTests {
    /// The kick counter, taken by both, and a
    /// questionnaire: one Observation per kick count, read, searched, paged, counted and exported.
    /// Returns Sam's Observation's id.
    static func tasksAreObservations(
        _ platform: Platform, token: String, participants: [(app: MyStudiesApp, appToken: String, id: Int64)]
    ) async throws -> String {
        let fhir = platform.response.baseURL + "/fhir/r4"
        func get(_ path: String) async throws -> Wire.Reply {
            try await Wire.send(.GET, path.hasPrefix("http") ? path : fhir + path, headers: [("Authorization", "Bearer \(token)")])
        }
        for participant in participants {
            #expect(try await participant.app.processResponse(try JourneyResponses.kickResponse(participant: participant.appToken)).status == 200)
        }
        let sam = participants[0]
        #expect(try await sam.app.processResponse(JourneyResponses.dailyResponse(participant: sam.appToken, name: "daily", version: "1.0")).status == 200)
        let responses = try await eventually("the three responses processed", within: .seconds(60)) {
            let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
            let responses = list.json?["responses"]?.array ?? []
            return responses.count == 3 && responses.allSatisfy { $0["status"]?.string == "processed" } ? responses : nil
        }
        #expect(responses.count == 3)
        let kicks = try await platform.withResponseDatabase { postgres, logger in
            var found: [(Int64, Int64)] = []
            for try await row in try await postgres.query(
                """
                SELECT r.id, p.number FROM responses r JOIN participants p ON p.id = r.participant_id
                WHERE r.activity_id = 'kicks' ORDER BY r.id
                """, logger: logger
            ).decode((Int64, Int64).self) { found.append(row) }
            return found
        }
        #expect(kicks.count == 2)

        let all = try await get("/Observation")
        #expect(all.status == 200, "\(all.text)")
        let observations = all.json?["entry"]?.array?.compactMap { $0["resource"] } ?? []
        #expect(observations.count == 2, "one per kick count, none for the questionnaire: \(all.text)")
        #expect(observations.compactMap { $0["id"]?.string } == kicks.map { "\($0.0)-1" })
        #expect(observations.compactMap { $0["subject"]?["reference"]?.string } == kicks.map { "Patient/\($0.1)" })
        #expect(observations.allSatisfy { $0["code"]?["coding"]?.array?.first?["code"]?.string == "fetalKickCounter" })
        #expect(observations.allSatisfy { $0["component"]?.array?.last?["valueInteger"]?.number == 33 })
        #expect(observations.first?["derivedFrom"]?.array?.first?["reference"]?.string == "QuestionnaireResponse/\(kicks[0].0)")
        let samObservation = "\(kicks[0].0)-1"
        let read = try await get("/Observation/\(samObservation)")
        #expect(read.status == 200, "\(read.text)")
        #expect(read.json == observations.first)
        let derived = try await get("/QuestionnaireResponse/\(kicks[0].0)")
        #expect(derived.json?["subject"] == read.json?["subject"], "the Observation and its response name the same Patient")

        let bySubject = try await get("/Observation?subject=Patient/\(sam.id)&_include=Observation:subject")
        #expect(bySubject.json?["entry"]?.array?.compactMap { $0["search"]?["mode"]?.string } == ["match", "include"], "\(bySubject.text)")
        let byCode = try await get("/Observation?code=\(FHIRNaming(base: fhir).activeTaskSystem)%7CfetalKickCounter&_summary=count")
        #expect(byCode.json?["total"]?.integer == 2, "\(byCode.text)")
        let hanoi = try await get("/Observation?code=towerOfHanoi&_summary=count")
        #expect(hanoi.json?["total"]?.integer == 0, "\(hanoi.text)")
        let byId = try await get("/Observation?_id=\(samObservation),\(kicks[0].0)-2&_summary=count")
        #expect(byId.json?["total"]?.integer == 1, "\(byId.text)")
        var next: String? = fhir + "/Observation?_count=1"
        var pages: [[String]] = []
        while let url = next, pages.count < 4 {
            let page = try await get(url)
            pages.append(page.json?["entry"]?.array?.compactMap { $0["resource"]?["id"]?.string } ?? [])
            next = page.json?["link"]?.array?.first { $0["relation"]?.string == "next" }?["url"]?.string
        }
        #expect(pages == kicks.map { ["\($0.0)-1"] }, "\(pages)")
        for (path, status) in [
            ("/Observation?code=heartRate", 400), ("/Observation?code=http://loinc.org%7CfetalKickCounter", 400),
            ("/Observation/\(kicks[0].0)-2", 404), ("/Observation/\(responses.count + 100)-1", 404), ("/Observation/abc", 404),
        ] {
            #expect(try await get(path).status == status, "\(path)")
        }
        let daily = try await platform.withResponseDatabase { postgres, logger in
            var found: Int64 = 0
            for try await id in try await postgres.query("SELECT id FROM responses WHERE activity_id = 'daily'", logger: logger).decode(Int64.self) {
                found = id
            }
            return found
        }
        #expect(try await get("/Observation/\(daily)-1").status == 404, "a questionnaire is no Observation")
        let checked = try await SMARTBackendServicesTests.validated([read.body, all.body, bySubject.body, byCode.body])
        #expect(checked.contains("checked 4 resources (3 Bundle, 1 Observation), 0 failures"), "\(checked)")

        // Exported as read; de-identified, under pseudonyms with their times moved.
        for deidentified in [false, true] {
            let client = try await FHIRBulkExportTests.client(platform, name: deidentified ? "Task analysts" : "Task loader", deidentified: deidentified)
            let kickOff = try await Wire.send(
                .GET, fhir + "/Group/DEMOSTUDY/$export?_type=Observation",
                headers: [("Authorization", "Bearer \(client.token)"), ("Prefer", "respond-async")])
            #expect(kickOff.status == 202, "\(kickOff.text)")
            let manifest = try await FHIRBulkExportTests.manifest(try #require(kickOff.header("Content-Location")), token: client.token)
            let file = try #require(manifest["output"]?.array?.first)
            #expect(file["count"]?.integer == 2, "\(manifest)")
            let exported = try await Wire.send(.GET, try #require(file["url"]?.string), headers: [("Authorization", "Bearer \(client.token)")])
            let lines = exported.body.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONValue.parse(Array($0), budget: .studyDocument) }
            #expect(lines.count == 2)
            if deidentified {
                #expect(lines.allSatisfy { !($0["subject"]?["reference"]?.string?.hasSuffix("/\(sam.id)") ?? true) })
                #expect(lines.map { $0["component"] } == observations.map { $0["component"] }, "the values stay")
                #expect(lines.first?["issued"] != observations.first?["issued"], "the times move")
            } else {
                #expect(lines == observations)
            }
        }
        return samObservation
    }
}
