import Foundation
import JSONText
import ServiceKit
import Testing
import TestSupport

/// Bulk Data exports (the Bulk Data Access IG v2) as a backend client runs them: kick-off,
/// status polled to the manifest, each NDJSON file read and checked by fhir.resources, counts
/// reconciled with the tables; `_type` and `_since`; cancelling; one client's export out of
/// another's reach; a client's unfinished exports bounded; every kick-off refused that should be.
@Suite(.needsCluster) struct FHIRBulkExportTests {
    /// A client registered on DEMOSTUDY and a token of it (`system/*.rs`).
    static func client(_ platform: Platform, name: String, deidentified: Bool = false) async throws -> (id: String, token: String) {
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("bulk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keys) }
        let jwks = try JSONSerialization.jsonObject(
            with: try await ChildProcess.runInTask(TestEnvironment.toolsPython, [SMARTBackendServicesTests.script, "keygen", keys.path]))
        let registered = try await platform.admin.send(
            .POST, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/fhir-clients",
            json: ["name": name, "jwks": jwks, "deidentified": deidentified])
        #expect(registered.status == 201, "\(registered.text)")
        let id = try #require(registered.json?["clientId"]?.string)
        let reply = try await SMARTBackendServicesTests.token(
            try #require(registered.json?["tokenURL"]?.string), client: id, keys: keys, alg: "ES384")
        return (id, try #require(reply.body["access_token"]?.string, "\(reply.body)"))
    }

    @Test func aGroupExportHoldsTheStudyAndReconcilesWithItsTables() async throws {
        try await Platform.run { platform in
            let fhir = platform.response.baseURL + "/fhir/r4"
            let warehouse = try await Self.client(platform, name: "Warehouse")
            func get(_ url: String, token: String? = nil, prefer: Bool = false) async throws -> Wire.Reply {
                var headers = [("Authorization", "Bearer \(token ?? warehouse.token)"), ("Accept", "application/fhir+json")]
                if prefer { headers.append(("Prefer", "respond-async")) }
                return try await Wire.send(.GET, url, headers: headers)
            }

            // Two participants, a response each.
            for (index, platformKind) in [(0, MyStudiesApp.Kind.ios), (1, .android)] {
                let app = platform.app(platformKind)
                let enrolled = try await app.response(
                    "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[index]), ("allowDataSharing", "true")])
                let appToken = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
                let sent = try await app.processResponse(JourneyResponses.dailyResponse(participant: appToken, name: "daily", version: "1.0"))
                #expect(sent.status == 200)
            }
            _ = try await eventually("both responses processed", within: .seconds(60)) {
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 2 && responses.allSatisfy { $0["status"]?.string == "processed" } ? responses : nil
            }

            // Kick-offs that are refused, each with why, and nothing recorded.
            let refused: [(String, Wire.Reply, Int, String)] = try await [
                ("no Prefer", get(fhir + "/Group/DEMOSTUDY/$export"), 400, "respond-async"),
                ("unknown parameter", get(fhir + "/Group/DEMOSTUDY/$export?patient=Patient/1", prefer: true), 400, "not supported"),
                ("unknown type", get(fhir + "/Group/DEMOSTUDY/$export?_type=Encounter", prefer: true), 400, "_type takes"),
                ("bad since", get(fhir + "/Group/DEMOSTUDY/$export?_since=yesterday", prefer: true), 400, "instant"),
                ("format", get(fhir + "/Group/DEMOSTUDY/$export?_outputFormat=text/csv", prefer: true), 400, "_outputFormat"),
                ("another group", get(fhir + "/Group/OTHER.STUDY/$export", prefer: true), 404, "not known"),
                ("no token", Wire.send(.GET, fhir + "/Group/DEMOSTUDY/$export", headers: [("Prefer", "respond-async")]), 401, "bearer"),
            ]
            #expect(refused.count == 7)
            for (name, reply, status, words) in refused {
                #expect(reply.status == status, "\(name): \(reply.status) \(reply.text)")
                #expect(reply.json?["resourceType"]?.string == "OperationOutcome", "\(name)")
                #expect(reply.text.contains(words), "\(name): \(reply.text)")
            }
            #expect(try await Self.exportRows(platform) == 0)

            // The whole group: every type, polled to its manifest.
            let kickOff = try await get(fhir + "/Group/DEMOSTUDY/$export", prefer: true)
            #expect(kickOff.status == 202, "\(kickOff.text)")
            let statusURL = try #require(kickOff.header("Content-Location"))
            #expect(statusURL.hasPrefix(fhir + "/bulk-status/"))
            let manifest = try await Self.manifest(statusURL, token: warehouse.token)
            #expect(manifest["request"]?.string == fhir + "/Group/DEMOSTUDY/$export")
            #expect(manifest["requiresAccessToken"]?.bool == true)
            let output = manifest["output"]?.array ?? []
            let counts = Dictionary(uniqueKeysWithValues: output.map { ($0["type"]?.string ?? "", $0["count"]?.integer ?? -1) })
            #expect(output.count == 5, "\(manifest)")
            let (participants, responses) = try await platform.withResponseDatabase { postgres, logger in
                var found = (0, 0)
                for try await row in try await postgres.query(
                    "SELECT (SELECT count(*)::int FROM participants WHERE study_key = 'DEMOSTUDY'), (SELECT count(*)::int FROM responses WHERE study_key = 'DEMOSTUDY')",
                    logger: logger
                ).decode((Int, Int).self) { found = row }
                return found
            }
            #expect(participants == 2 && responses == 2)
            #expect(counts["Patient"] == participants && counts["ResearchSubject"] == participants)
            #expect(counts["QuestionnaireResponse"] == responses)
            #expect(counts["ResearchStudy"] == 1)
            let questionnaires = try await get(fhir + "/Questionnaire?_summary=count")
            #expect(counts["Questionnaire"] == questionnaires.json?["total"]?.integer, "\(questionnaires.text)")

            // Each file: NDJSON of its type, as many lines as the manifest says, valid FHIR.
            var lines: [Data] = []
            for file in output {
                let url = try #require(file["url"]?.string)
                #expect(try await Wire.send(.GET, url).status == 401, "a file needs the token")
                let read = try await get(url)
                #expect(read.status == 200, "\(read.text)")
                #expect(read.header("Content-Type") == "application/fhir+ndjson")
                let fileLines = read.body.split(separator: UInt8(ascii: "\n")).map { Data($0) }
                #expect(fileLines.count == file["count"]?.integer, "\(file)")
                let type = file["type"]?.string ?? ""
                #expect(fileLines.allSatisfy { (try? JSONValue.parse(Array($0), budget: .studyDocument))?["resourceType"]?.string == type })
                lines += fileLines
            }
            let checked = try await SMARTBackendServicesTests.validated(lines)
            #expect(checked.contains("checked \(lines.count) resources"), "\(checked)")
            #expect(checked.contains(", 0 failures"), "\(checked)")

            // Another client of the same study does not reach this export.
            let other = try await Self.client(platform, name: "Someone else")
            #expect(try await get(statusURL, token: other.token).status == 404)
            #expect(try await get(try #require(output.first?["url"]?.string), token: other.token).status == 404)

            // _type and _since: responses since now are none; patients only is one file.
            let since = Date().formatted(.iso8601)
            let none = try await get(fhir + "/Patient/$export?_type=QuestionnaireResponse&_since=\(since)", prefer: true)
            #expect(none.status == 202, "\(none.text)")
            let empty = try await Self.manifest(try #require(none.header("Content-Location")), token: warehouse.token)
            #expect(empty["output"]?.array?.count == 0, "\(empty)")
            let patientsOnly = try await get(fhir + "/Patient/$export?_type=Patient&_outputFormat=application/fhir%2Bndjson", prefer: true)
            let patientFiles = try await Self.manifest(try #require(patientsOnly.header("Content-Location")), token: warehouse.token)
            #expect(patientFiles["output"]?.array?.map { $0["type"]?.string ?? "" } == ["Patient"])

            // Cancelled: the status and the files are gone.
            let cancelled = try #require(none.header("Content-Location"))
            let deleted = try await Wire.send(.DELETE, cancelled, headers: [("Authorization", "Bearer \(warehouse.token)")])
            #expect(deleted.status == 202)
            #expect(try await get(cancelled).status == 404)
            #expect(try await Wire.send(.DELETE, cancelled, headers: [("Authorization", "Bearer \(warehouse.token)")]).status == 404)

            // A client's unfinished exports are bounded: two waiting, a third is told to wait.
            let held = [UUID(), UUID()]
            try await platform.withResponseDatabase { postgres, logger in
                for id in held {
                    try await postgres.query(
                        """
                        INSERT INTO fhir_exports (id, client_id, study_key, request_url, types, transaction_time, next_attempt_at, expires_at)
                        VALUES (\(id), \(other.id), 'DEMOSTUDY', 'held', '{Patient}', now(), now() + interval '1 day', now() + interval '1 day')
                        """, logger: logger)
                }
            }
            let third = try await get(fhir + "/Group/DEMOSTUDY/$export", token: other.token, prefer: true)
            #expect(third.status == 429, "\(third.text)")
            #expect(third.header("Retry-After") != nil)
            // A waiting export's status says so, and when to ask again.
            let waiting = try await get(fhir + "/bulk-status/\(held[0].uuidString.lowercased())", token: other.token)
            #expect(waiting.status == 202)
            #expect(waiting.header("X-Progress") == "queued")
            #expect(waiting.header("Retry-After") == "2")

            try await Self.deidentifiedExportKeepsNoIdentifiers(platform, identified: lines)

            let actions = try await platform.withResponseDatabase { postgres, logger in
                var found: [String: Int] = [:]
                for try await action in try await postgres.query(
                    "SELECT action FROM audit_events WHERE action LIKE 'fhir.export%'", logger: logger
                ).decode(String.self) { found[action, default: 0] += 1 }
                return found
            }
            #expect(actions == [
                "fhir.export_requested": 4, "fhir.export_completed": 4, "fhir.export_file_read": 8, "fhir.export_cancelled": 1,
            ])
        }
    }

    static func exportRows(_ platform: Platform) async throws -> Int {
        try await platform.withResponseDatabase { postgres, logger in
            var count = 0
            for try await n in try await postgres.query("SELECT count(*)::int FROM fhir_exports", logger: logger).decode(Int.self) { count = n }
            return count
        }
    }

    /// Polls a status URL to its manifest (202 with `X-Progress` and `Retry-After` meanwhile).
    static func manifest(_ statusURL: String, token: String, within limit: Duration = .seconds(90)) async throws -> JSONValue {
        let reply = try await eventually("the export complete", within: limit, poll: .milliseconds(200)) {
            try await Wire.send(.GET, statusURL, headers: [("Authorization", "Bearer \(token)")])
        } until: { $0.status != 202 }
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.header("Content-Type") == "application/json")
        #expect(reply.header("Expires") != nil)
        return try #require(reply.json)
    }

    /// A client registered for de-identified data: it reads no participant's resource directly,
    /// and its export holds each participant under a pseudonym, without identifiers or free text,
    /// every date of a participant moved by the same whole number of days (never 0, at most 100).
    static func deidentifiedExportKeepsNoIdentifiers(_ platform: Platform, identified: [Data]) async throws {
        let fhir = platform.response.baseURL + "/fhir/r4"
        let analyst = try await Self.client(platform, name: "Analysts", deidentified: true)
        let headers = [("Authorization", "Bearer \(analyst.token)"), ("Prefer", "respond-async")]
        let original = identified.compactMap { try? JSONValue.parse(Array($0), budget: .studyDocument) }
        let participantIds = original.filter { $0["resourceType"]?.string == "Patient" }.compactMap { $0["id"]?.string }
        #expect(participantIds.count == 2)
        for path in ["/Patient/\(participantIds[0])", "/QuestionnaireResponse?_count=1"] {
            let refused = try await Wire.send(.GET, fhir + path, headers: headers)
            #expect(refused.status == 403, "\(path): \(refused.text)")
            #expect(refused.text.contains("de-identified"), "\(refused.text)")
        }
        let kickOff = try await Wire.send(.GET, fhir + "/Group/DEMOSTUDY/$export?_type=Patient,ResearchSubject,QuestionnaireResponse", headers: headers)
        #expect(kickOff.status == 202, "\(kickOff.text)")
        let manifest = try await Self.manifest(try #require(kickOff.header("Content-Location")), token: analyst.token)
        var lines: [Data] = []
        for file in manifest["output"]?.array ?? [] {
            let read = try await Wire.send(.GET, try #require(file["url"]?.string), headers: headers)
            lines += read.body.split(separator: UInt8(ascii: "\n")).map { Data($0) }
        }
        #expect(lines.count == 6, "two Patients, two ResearchSubjects, two responses")
        let text = lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        #expect(!text.contains("\"identifier\""), "no identifier")
        #expect(!text.contains("\"valueString\""), "no free text")
        #expect(!text.contains("Woke once"), "the participant's own words are gone")
        let resources = lines.compactMap { try? JSONValue.parse(Array($0), budget: .studyDocument) }
        let pseudonyms = resources.filter { $0["resourceType"]?.string == "Patient" }.compactMap { $0["id"]?.string }
        #expect(pseudonyms.count == 2 && Set(pseudonyms).isDisjoint(with: participantIds), "\(pseudonyms)")
        let responses = resources.filter { $0["resourceType"]?.string == "QuestionnaireResponse" }
        #expect(responses.count == 2)
        let day = 86_400.0
        for response in responses {
            #expect(pseudonyms.contains(String(response["subject"]?["reference"]?.string?.dropFirst("Patient/".count) ?? "")))
            let same = try #require(original.first { $0["resourceType"]?.string == "QuestionnaireResponse" && $0["id"] == response["id"] })
            let moved = try #require(Self.instant(response["authored"]?.string), "\(response)")
            let was = try #require(Self.instant(same["authored"]?.string), "\(same)")
            let days = moved.timeIntervalSince(was) / day
            #expect(days == days.rounded() && days != 0 && abs(days) <= 100, "shifted by whole days: \(days)")
        }
        let checked = try await SMARTBackendServicesTests.validated(lines)
        #expect(checked.contains("checked 6 resources"), "\(checked)")
        #expect(checked.contains(", 0 failures"), "\(checked)")
    }

    static func instant(_ text: String?) -> Date? {
        guard let text else { return nil }
        return (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }
}
