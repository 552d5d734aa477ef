import AsyncHTTPClient
import FHIR
import Foundation
import JSONText
import ServiceKit
import Testing
import TestSupport

/// Consents and active tasks' Observations as the FHIR API serves them, from participants who
/// signed and took the kick counter through the MyStudies apps' own calls: one `Consent` per
/// signing with its status and sharing choice, the signed PDF as a `Binary`, one `Observation` per
/// task; searches and paging, the Bulk export, a de-identified client's export without the
/// document, scopes, and another study's client reaching none of it.
@Suite(.needsCluster) struct FHIRConsentTests {
    static let samPDF = Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% signed by sam, 1.0\n%%EOF\n".utf8)

    /// Signs up, enrols with `token` and returns the app and its participant id; `joinFirst`:
    /// the app reports its participant id before it uploads the consent (otherwise after).
    static func participant(
        _ platform: Platform, _ kind: MyStudiesApp.Kind, email: String, token: String
    ) async throws -> (app: MyStudiesApp, appToken: String) {
        let app = platform.app(kind)
        try await PlatformJourneyTests().signUp(app, email, platform: platform, deviceToken: nil)
        let enrolled = try await app.response("enroll", [("studyId", "DEMOSTUDY"), ("token", token), ("allowDataSharing", "true")])
        return (app, try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)"))
    }

    static func join(_ app: MyStudiesApp, _ appToken: String) async throws {
        let joined = try await app.registration(
            "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": appToken]]])
        #expect(joined.status == 200, "\(joined.text)")
    }

    static func sign(_ app: MyStudiesApp, version: String, status: String = "completed", pdf: Data?, sharing: String) async throws {
        var consent: [String: Any] = ["version": version, "status": status]
        if let pdf { consent["pdf"] = pdf.base64EncodedString() }
        let signed = try await app.registration(
            "updateEligibilityConsentStatus", body: ["studyId": "DEMOSTUDY", "eligibility": true, "consent": consent, "sharing": sharing],
            explicitAuth: true)
        #expect(signed.status == 200, "\(signed.text)")
    }

    /// Sixty reads of a 4 MiB signed PDF at once: a process reads at most four together and lets
    /// sixteen wait, so at least twenty are served, whole, and the rest are told to come back
    /// (`429` with `Retry-After`) rather than held in memory together.
    @Test func manyDocumentReadsAtOnceAreBounded() async throws {
        try await Platform.run { platform in
            let fhir = platform.response.baseURL + "/fhir/r4"
            let readers = try await FHIRBulkExportTests.client(platform, name: "Readers")
            let sam = try await Self.participant(platform, .ios, email: "readers@example.org", token: platform.tokens[0])
            try await Self.join(sam.app, sam.appToken)
            let large = Self.samPDF + Data(repeating: UInt8(ascii: "%"), count: 4 << 20)
            try await Self.sign(sam.app, version: "1.0", pdf: large, sharing: "true")
            let found = try await Wire.send(.GET, fhir + "/Consent", headers: [("Authorization", "Bearer \(readers.token)")])
            let consentId = try #require(found.json?["entry"]?.array?.first?["resource"]?["id"]?.string, "\(found.text)")

            // A client of its own, so the sixty go out at once (a shared one holds eight a host).
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let replies: [Wire.Reply]
            do {
                replies = try await withThrowingTaskGroup(of: Wire.Reply.self) { group in
                    for _ in 0..<60 {
                        group.addTask {
                            try await Wire.send(
                                .GET, fhir + "/Binary/consent-\(consentId)",
                                headers: [("Authorization", "Bearer \(readers.token)"), ("Accept", "application/pdf")], client: client,
                                timeout: .seconds(120))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
            #expect(replies.count == 60)
            let served = replies.filter { $0.status == 200 }
            let busy = replies.filter { $0.status == 429 }
            #expect(served.count + busy.count == 60, "\(replies.map(\.status))")
            #expect(served.count >= 20, "four read and sixteen wait: \(served.count)")
            #expect(!busy.isEmpty, "sixty at once are more than twenty")
            #expect(served.allSatisfy { $0.body == large }, "every PDF served whole")
            #expect(busy.allSatisfy { $0.header("Retry-After") != nil && $0.json?["issue"]?.array?.first?["code"]?.string == "throttled" })
        }
    }

    @Test func signedConsentsAreReadAsFHIRWithTheirDocuments() async throws {
        try await Platform.run { platform in
            let fhir = platform.response.baseURL + "/fhir/r4"
            let warehouse = try await FHIRBulkExportTests.client(platform, name: "Warehouse")
            func get(_ path: String, token: String? = nil, accept: String = "application/fhir+json") async throws -> Wire.Reply {
                try await Wire.send(
                    .GET, path.hasPrefix("http") ? path : fhir + path,
                    headers: [("Authorization", "Bearer \(token ?? warehouse.token)"), ("Accept", accept)])
            }

            // Sam (iOS) joins, signs 1.0 sharing his data, then signs again (a re-consent sends
            // no sharing choice). Tia (Android) uploads her consent before her app reports its
            // participant id, declines sharing, then withdraws.
            let sam = try await Self.participant(platform, .ios, email: "sam-fhir@example.org", token: platform.tokens[0])
            let tia = try await Self.participant(platform, .android, email: "tia-fhir@example.org", token: platform.tokens[1])
            try await Self.join(sam.app, sam.appToken)
            try await Self.sign(sam.app, version: "1.0", pdf: Self.samPDF, sharing: "true")
            try await Self.sign(sam.app, version: "1.0", pdf: Self.samPDF + Data("% again\n".utf8), sharing: "")
            try await Self.sign(tia.app, version: "1.0", pdf: Self.samPDF, sharing: "false")
            try await Self.join(tia.app, tia.appToken)
            let (samId, tiaId) = try await platform.withResponseDatabase { postgres, logger in
                var ids: [Int64] = []
                for try await id in try await postgres.query("SELECT number FROM participants ORDER BY id", logger: logger).decode(Int64.self) {
                    ids.append(id)
                }
                return (ids.first ?? 0, ids.last ?? 0)
            }
            #expect(samId > 0 && tiaId > samId)

            // Sam's consents: the first ended by the second, which carries his sharing choice.
            let samSearch = try await get("/Consent?patient=Patient/\(samId)")
            #expect(samSearch.status == 200, "\(samSearch.text)")
            let samConsents = samSearch.json?["entry"]?.array?.compactMap { $0["resource"] } ?? []
            try #require(samConsents.count == 2)
            #expect(samConsents.map { $0["status"]?.string } == ["inactive", "active"])
            #expect(samConsents.allSatisfy { $0["patient"]?["reference"]?.string == "Patient/\(samId)" })
            #expect(samConsents.allSatisfy { $0["provision"]?["provision"]?.array?.first?["type"]?.string == "permit" })
            #expect(samConsents[0]["provision"]?["period"]?["end"]?.string == samConsents[1]["dateTime"]?.string)
            let samFirst = try #require(samConsents.first?["id"]?.string)

            // Each read alone, as searched; its PDF read where the attachment says.
            let read = try await get("/Consent/\(samFirst)")
            #expect(read.status == 200, "\(read.text)")
            #expect(read.header("Content-Type") == "application/fhir+json")
            #expect(read.json == samConsents.first)
            let attachment = try #require(read.json?["sourceAttachment"])
            #expect(attachment["url"]?.string == fhir + "/Binary/consent-\(samFirst)")
            #expect(attachment["size"]?.integer == Self.samPDF.count)
            let pdf = try await get(try #require(attachment["url"]?.string), accept: "application/pdf")
            #expect(pdf.status == 200)
            #expect(pdf.header("Content-Type") == "application/pdf")
            #expect(pdf.header("Cache-Control") == "no-store")
            #expect(pdf.body == Self.samPDF, "the PDF as the app uploaded it")
            let binary = try await get("/Binary/consent-\(samFirst)")
            #expect(binary.json?["resourceType"]?.string == "Binary")
            #expect(binary.json?["data"]?.string.flatMap { Data(base64Encoded: $0) } == Self.samPDF)
            #expect(binary.json?["securityContext"]?["reference"]?.string == "Consent/\(samFirst)")

            // Tia's, declined sharing; then she withdraws and it ends.
            let tiaBefore = try await get("/Consent?patient=Patient/\(tiaId)")
            let tiaConsent = try #require(tiaBefore.json?["entry"]?.array?.first?["resource"])
            #expect(tiaConsent["status"]?.string == "active")
            #expect(tiaConsent["provision"]?["provision"]?.array?.first?["type"]?.string == "deny")
            let left = try await tia.app.registration("withdraw", method: .DELETE, body: ["studyId": "DEMOSTUDY", "deleteData": false])
            #expect(left.status == 200, "\(left.text)")
            let tiaAfter = try await get("/Consent/\(try #require(tiaConsent["id"]?.string))")
            #expect(tiaAfter.json?["status"]?.string == "inactive")
            #expect(tiaAfter.json?["meta"]?["versionId"]?.string == "2")
            let tiaChanged = try #require(tiaAfter.json?["meta"]?["lastUpdated"]?.string)
            // Its history: as signed, then ended; each version read alone.
            let tiaConsentId = try #require(tiaConsent["id"]?.string)
            let history = try await get("/Consent/\(tiaConsentId)/_history")
            #expect(history.status == 200, "\(history.text)")
            let versions = history.json?["entry"]?.array?.compactMap { $0["resource"] } ?? []
            #expect(versions.map { $0["meta"]?["versionId"]?.string } == ["2", "1"], "newest first: \(history.text)")
            #expect(versions.map { $0["status"]?.string } == ["inactive", "active"])
            #expect(versions.last?["provision"]?["period"]?["end"] == nil)
            #expect(versions.last?["meta"]?["lastUpdated"] == versions.last?["dateTime"])
            #expect(try await get("/Consent/\(tiaConsentId)/_history/1").json == versions.last)
            #expect(try await get("/Consent/\(tiaConsentId)/_history/2").json == tiaAfter.json)
            for version in ["3", "0", "x", "01"] {
                #expect(try await get("/Consent/\(tiaConsentId)/_history/\(version)").status == 404, "\(version)")
            }

            // Searches: by status, counted, with the Patients included, changed since, a page at a time.
            let active = try await get("/Consent?status=active")
            #expect(active.json?["entry"]?.array?.compactMap { $0["resource"]?["id"]?.string } == [samConsents[1]["id"]?.string ?? ""])
            let counted = try await get("/Consent?_summary=count")
            #expect(counted.json?["total"]?.integer == 3, "\(counted.text)")
            let included = try await get("/Consent?_include=Consent:patient")
            let modes = included.json?["entry"]?.array?.compactMap { $0["search"]?["mode"]?.string } ?? []
            #expect(modes == ["match", "match", "match", "include", "include"], "\(modes)")
            let changed = try await get("/Consent?_lastUpdated=ge\(tiaChanged)")
            #expect(changed.json?["entry"]?.array?.count == 1, "\(changed.text)")
            let later = try await get("/Consent?_lastUpdated=gt\(tiaChanged)")
            #expect(later.json?["entry"] == nil, "nothing changed after: \(later.text)")
            var next: String? = fhir + "/Consent?_count=1"
            var pages: [[String]] = []
            while let url = next, pages.count < 5 {
                let page = try await get(url)
                pages.append(page.json?["entry"]?.array?.compactMap { $0["resource"]?["id"]?.string } ?? [])
                next = page.json?["link"]?.array?.first { $0["relation"]?.string == "next" }?["url"]?.string
            }
            #expect(pages.count == 3 && pages.allSatisfy { $0.count == 1 } && Set(pages.joined()).count == 3, "\(pages)")
            let unsupported = try await get("/Consent?category=research")
            #expect(unsupported.status == 400, "\(unsupported.text)")
            #expect(unsupported.json?["resourceType"]?.string == "OperationOutcome")
            for path in ["/Consent/999999", "/Binary/consent-999999", "/Binary/photo-1", "/Consent/abc"] {
                #expect(try await get(path).status == 404, "\(path)")
            }
            let checked = try await SMARTBackendServicesTests.validated(
                [read.body, binary.body, tiaAfter.body, samSearch.body, counted.body, included.body, history.body])
            #expect(checked.contains("checked 7 resources (1 Binary, 4 Bundle, 2 Consent), 0 failures"), "\(checked)")

            // The Bulk export holds them as read.
            let kickOff = try await Wire.send(
                .GET, fhir + "/Group/DEMOSTUDY/$export?_type=Consent",
                headers: [("Authorization", "Bearer \(warehouse.token)"), ("Prefer", "respond-async")])
            #expect(kickOff.status == 202, "\(kickOff.text)")
            let manifest = try await FHIRBulkExportTests.manifest(try #require(kickOff.header("Content-Location")), token: warehouse.token)
            let file = try #require(manifest["output"]?.array?.first)
            #expect(file["type"]?.string == "Consent" && file["count"]?.integer == 3, "\(manifest)")
            let exported = try await get(try #require(file["url"]?.string))
            let lines = exported.body.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONValue.parse(Array($0), budget: .studyDocument) }
            #expect(lines.count == 3)
            #expect(lines.contains(try #require(tiaAfter.json)))

            try await Self.deidentifiedClientGetsNoDocument(platform, identified: lines, samId: samId)
            let observationId = try await Self.tasksAreObservations(
                platform, token: warehouse.token, participants: [(sam.app, sam.appToken, samId), (tia.app, tia.appToken, tiaId)])

            // Tia leaves the study at the response service too: her Patient and ResearchSubject
            // have a second version, and their history both.
            #expect(try await tia.app.response("withdrawFromStudy", [("participantId", tia.appToken), ("delete", "0")]).status == 200)
            var histories: [Data] = []
            for type in ["Patient", "ResearchSubject"] {
                let history = try await get("/\(type)/\(tiaId)/_history")
                #expect(history.status == 200, "\(type): \(history.text)")
                let versions = history.json?["entry"]?.array?.compactMap { $0["resource"] } ?? []
                #expect(versions.map { $0["meta"]?["versionId"]?.string } == ["2", "1"], "\(type): \(history.text)")
                #expect(try await get("/\(type)/\(tiaId)").json == versions.first)
                #expect(try await get("/\(type)/\(tiaId)/_history/1").json == versions.last)
                histories.append(history.body)
            }
            #expect(try await get("/Patient/\(samId)/_history").json?["total"]?.integer == 1, "Sam is still enrolled: one version")
            let checkedHistories = try await SMARTBackendServicesTests.validated(histories)
            #expect(checkedHistories.contains("checked 2 resources (2 Bundle), 0 failures"), "\(checkedHistories)")
            try await Self.scopesAndStudiesBoundWhatIsRead(platform, consentId: samFirst, observationId: observationId)

            let reads = try await platform.withResponseDatabase { postgres, logger in
                var found: [String] = []
                for try await resource in try await postgres.query(
                    "SELECT details->>'resource' FROM audit_events WHERE action = 'fhir.read' ORDER BY id", logger: logger
                ).decode(String.self) { found.append(resource) }
                return found
            }
            #expect(reads.filter { $0.hasPrefix("Binary/") } == ["Binary/consent-\(samFirst)", "Binary/consent-\(samFirst)"], "\(reads)")
            #expect(
                reads.filter { $0.hasPrefix("Consent/") }.count == 6,
                "two reads, a history, two versions (none for those refused), and one with a token for consents alone: \(reads)")
        }
    }

    /// A de-identified client reads no consent directly, and its export has each one without
    /// the signed document, under the participant's pseudonym, its dates moved.
    static func deidentifiedClientGetsNoDocument(_ platform: Platform, identified: [JSONValue], samId: Int64) async throws {
        let fhir = platform.response.baseURL + "/fhir/r4"
        let analyst = try await FHIRBulkExportTests.client(platform, name: "Analysts", deidentified: true)
        let headers = [("Authorization", "Bearer \(analyst.token)"), ("Prefer", "respond-async")]
        let consentId = try #require(identified.first?["id"]?.string)
        for path in ["/Consent/\(consentId)", "/Binary/consent-\(consentId)", "/Consent?_count=1"] {
            let refused = try await Wire.send(.GET, fhir + path, headers: headers)
            #expect(refused.status == 403, "\(path): \(refused.text)")
        }
        let kickOff = try await Wire.send(.GET, fhir + "/Group/DEMOSTUDY/$export?_type=Consent", headers: headers)
        let manifest = try await FHIRBulkExportTests.manifest(try #require(kickOff.header("Content-Location")), token: analyst.token)
        let url = try #require(manifest["output"]?.array?.first?["url"]?.string)
        let read = try await Wire.send(.GET, url, headers: headers)
        let lines = read.body.split(separator: UInt8(ascii: "\n")).map { Data($0) }
        #expect(lines.count == 3)
        let text = String(decoding: read.body, as: UTF8.self)
        #expect(!text.contains("sourceAttachment") && !text.contains("Binary/"), "the signed document names the participant")
        #expect(!text.contains("\"Patient/\(samId)\""))
        let resources = lines.compactMap { try? JSONValue.parse(Array($0), budget: .studyDocument) }
        #expect(resources.count == 3)
        for resource in resources {
            let original = try #require(identified.first { $0["id"] == resource["id"] })
            let moved = try #require(FHIRBulkExportTests.instant(resource["dateTime"]?.string))
            let was = try #require(FHIRBulkExportTests.instant(original["dateTime"]?.string))
            let days = moved.timeIntervalSince(was) / 86_400
            #expect(days == days.rounded() && days != 0 && abs(days) <= 100, "shifted by whole days: \(days)")
            #expect(resource["status"] == original["status"])
        }
        let checked = try await SMARTBackendServicesTests.validated(lines)
        #expect(checked.contains("checked 3 resources (3 Consent), 0 failures"), "\(checked)")
    }

    /// A token for Consent alone reads consents and not their documents; a client of another
    /// study reaches none of them, nor an Observation, by any id.
    static func scopesAndStudiesBoundWhatIsRead(_ platform: Platform, consentId: String, observationId: String) async throws {
        let fhir = platform.response.baseURL + "/fhir/r4"
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("consent-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keys) }
        let jwks = try JSONSerialization.jsonObject(
            with: try await ChildProcess.runInTask(TestEnvironment.toolsPython, [SMARTBackendServicesTests.script, "keygen", keys.path]))
        func register(_ studyId: String) async throws -> (String, String) {
            let registered = try await platform.admin.send(
                .POST, platform.response.baseURL + "/admin/v1/studies/\(studyId)/fhir-clients", json: ["name": "Consents of \(studyId)", "jwks": jwks])
            #expect(registered.status == 201, "\(registered.text)")
            return (try #require(registered.json?["clientId"]?.string), try #require(registered.json?["tokenURL"]?.string))
        }
        let (clientId, tokenURL) = try await register("DEMOSTUDY")
        let narrow = try await SMARTBackendServicesTests.token(tokenURL, client: clientId, keys: keys, alg: "ES384", scope: "system/Consent.rs")
        let narrowToken = try #require(narrow.body["access_token"]?.string, "\(narrow.body)")
        let headers = [("Authorization", "Bearer \(narrowToken)")]
        #expect(try await Wire.send(.GET, fhir + "/Consent/\(consentId)", headers: headers).status == 200)
        #expect(try await Wire.send(.GET, fhir + "/Binary/consent-\(consentId)", headers: headers).status == 403)
        // Without _type, an export holds what the token reads: consents only.
        let kickOff = try await Wire.send(.GET, fhir + "/Patient/$export", headers: headers + [("Prefer", "respond-async")])
        #expect(kickOff.status == 202, "\(kickOff.text)")
        let manifest = try await FHIRBulkExportTests.manifest(try #require(kickOff.header("Content-Location")), token: narrowToken)
        #expect(manifest["output"]?.array?.compactMap { $0["type"]?.string } == ["Consent"], "\(manifest)")

        // Another study, launched, with its own client: DEMOSTUDY's consents are not there for it.
        let demo = try await platform.admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
        var other = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
        other["studyId"] = "OTHER_STUDY"
        other["name"] = ["en": "Another team's study"]
        #expect(try await platform.admin.send(.PUT, "/admin/v1/studies/OTHER_STUDY/draft", json: other, timeout: .seconds(120)).status == 201)
        #expect(try await platform.admin.send(.POST, "/admin/v1/studies/OTHER_STUDY/launch", timeout: .seconds(180)).status == 200)
        _ = try await eventually("the response service knows OTHER_STUDY", within: .seconds(60)) {
            let reply = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/OTHER_STUDY/fhir-clients")
            return reply.status == 200 ? reply : nil
        }
        let (otherId, otherTokenURL) = try await register("OTHER_STUDY")
        let otherToken = try #require(
            try await SMARTBackendServicesTests.token(otherTokenURL, client: otherId, keys: keys, alg: "ES384").body["access_token"]?.string)
        let elsewhere = [("Authorization", "Bearer \(otherToken)")]
        #expect(try await Wire.send(.GET, fhir + "/Observation/\(observationId)", headers: headers).status == 403, "not in scope")
        for path in ["/Consent/\(consentId)", "/Binary/consent-\(consentId)", "/Observation/\(observationId)"] {
            let reply = try await Wire.send(.GET, fhir + path, headers: elsewhere)
            #expect(reply.status == 404, "\(path): \(reply.text)")
        }
        for type in ["Consent", "Observation"] {
            let search = try await Wire.send(.GET, fhir + "/\(type)?_summary=count", headers: elsewhere)
            #expect(search.json?["total"]?.integer == 0, "\(type): \(search.text)")
        }
    }
}
