import FHIR
import Foundation
import JSONText
import ServiceKit
import Testing
import TestSupport

/// SMART Backend Services on the FHIR API, with the client side as PyJWT and cryptography write
/// it (`scripts/smart-backend-client.py`): a study admin registers a client's public keys; the
/// client gets a token with an RS384 or ES384 assertion and reads its study, and only its study;
/// every way an assertion can be wrong is refused; revoking the client stops its token at once.
@Suite(.needsCluster) struct SMARTBackendServicesTests {
    static let script = ServiceProcess.packageRoot.appendingPathComponent("scripts/smart-backend-client.py").path

    struct TokenReply {
        var status: Int
        var body: JSONValue
        var jti: String
    }

    static func token(
        _ tokenURL: String, client: String, keys: URL, alg: String, scope: String = "system/*.rs", _ overrides: [String] = []
    ) async throws -> TokenReply {
        let name = alg == "ES384" ? "es384" : "rs384"
        let output = try await ChildProcess.runInTask(
            TestEnvironment.toolsPython,
            [script, "token", tokenURL, client, keys.appendingPathComponent("\(name).pem").path, "\(name)-1", alg, scope] + overrides)
        let reply = try JSONValue.parse(Array(output), budget: .studyDocument)
        return TokenReply(status: Int(reply["status"]?.number ?? 0), body: reply["body"] ?? .null, jti: reply["jti"]?.string ?? "")
    }

    @Test func aRegisteredClientReadsItsStudyAndNothingElse() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            let keysFolder = FileManager.default.temporaryDirectory.appendingPathComponent("smart-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: keysFolder) }
            let jwksText = try await ChildProcess.runInTask(TestEnvironment.toolsPython, [Self.script, "keygen", keysFolder.path])
            let jwks = try JSONSerialization.jsonObject(with: jwksText)
            let clients = platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/fhir-clients"

            // Keys that are not a client's public keys are refused, each with why.
            var privateSet = try #require(jwks as? [String: Any])
            var keys = try #require(privateSet["keys"] as? [[String: Any]])
            keys[0]["d"] = "AQAB"
            privateSet["keys"] = keys
            let withPrivate = try await admin.send(.POST, clients, json: ["name": "leaky", "jwks": privateSet])
            #expect(withPrivate.status == 422, "\(withPrivate.text)")
            #expect(withPrivate.text.contains("/jwks/keys/0/d"), "\(withPrivate.text)")
            #expect(withPrivate.text.contains("private key"), "\(withPrivate.text)")
            let small = try await admin.send(.POST, clients, json: [
                "name": "small", "jwks": ["keys": [["kty": "RSA", "kid": "k", "n": String(repeating: "A", count: 171), "e": "AQAB"]]],
            ])
            #expect(small.status == 422, "\(small.text)")
            #expect(small.text.contains("2048 to 8192 bits"), "\(small.text)")
            let none = try await admin.send(.GET, clients)
            #expect(none.json?["clients"]?.array?.count == 0, "nothing was registered: \(none.text)")

            let registered = try await admin.send(.POST, clients, json: ["name": "Warehouse loader", "jwks": jwks])
            #expect(registered.status == 201, "\(registered.text)")
            let clientId = try #require(registered.json?["clientId"]?.string)
            let tokenURL = try #require(registered.json?["tokenURL"]?.string)
            #expect(tokenURL == platform.response.baseURL + "/fhir/r4/auth/token")
            #expect(registered.json?["keys"]?.array?.compactMap(\.string) == ["rs384-1 (RS384)", "es384-1 (ES384)"])

            // Discovery says where to ask and how.
            let configuration = try await Wire.send(.GET, platform.response.baseURL + "/fhir/r4/.well-known/smart-configuration")
            #expect(configuration.json?["token_endpoint"]?.string == tokenURL)
            #expect(configuration.json?["token_endpoint_auth_signing_alg_values_supported"]?.array?.compactMap(\.string) == ["RS384", "ES384"])

            // RS384 and ES384 assertions each get a token; only reading is granted.
            let rs = try await Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", scope: "system/*.cruds")
            #expect(rs.status == 200, "\(rs.body)")
            #expect(rs.body["scope"]?.string == "system/*.rs")
            #expect(rs.body["token_type"]?.string == "bearer")
            #expect(rs.body["expires_in"]?.number == 300)
            let es = try await Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "ES384", scope: "system/ResearchStudy.read")
            #expect(es.status == 200, "\(es.body)")
            let token = try #require(rs.body["access_token"]?.string)

            // Every way an assertion can be wrong.
            let refusals: [(String, TokenReply, Int, String)] = try await [
                ("replayed", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["jti=\(rs.jti)"]), 401, "used before"),
                ("expired", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["exp=-30"]), 401, "expired"),
                ("too long", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["exp=900"]), 401, "five minutes"),
                ("audience", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["aud=https://elsewhere.example/token"]), 401, "aud"),
                ("RS256", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["sign_alg=RS256"]), 401, "RS384 or ES384"),
                ("unknown client", Self.token(tokenURL, client: "nobody", keys: keysFolder, alg: "RS384"), 401, "not a registered client"),
                ("write only", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", scope: "system/*.cud"), 400, "invalid_scope"),
                ("grant", Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "RS384", ["grant_type=password"]), 400, "unsupported_grant_type"),
            ]
            #expect(refusals.count == 8)
            for (name, reply, status, words) in refusals {
                #expect(reply.status == status, "\(name): \(reply.status) \(reply.body)")
                #expect(reply.body.serialized().contains(words), "\(name): \(reply.body)")
                #expect(reply.body["access_token"] == nil, "\(name)")
            }
            // An ES384 key's assertion signed as RS384 names a key the client does not have.
            let mixed = try await ChildProcess.runInTask(TestEnvironment.toolsPython, [
                Self.script, "token", tokenURL, clientId, keysFolder.appendingPathComponent("rs384.pem").path, "es384-1", "RS384", "system/*.rs",
            ])
            #expect(String(decoding: mixed, as: UTF8.self).contains("\"status\": 401"), "\(String(decoding: mixed, as: UTF8.self))")

            // The token reads its study, as FHIR.
            let read = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/ResearchStudy/DEMOSTUDY", headers: [("Authorization", "Bearer \(token)")])
            #expect(read.status == 200, "\(read.text)")
            #expect(read.header("Content-Type") == "application/fhir+json")
            #expect(read.json?["resourceType"]?.string == "ResearchStudy")
            #expect(read.json?["status"]?.string == "active")
            #expect(try await Self.validated([read.body]).contains("checked 1 resources (1 ResearchStudy), 0 failures"))

            // A participant and their response, read as Patient, ResearchSubject and QuestionnaireResponse.
            let app = platform.app(.ios)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let appToken = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
            #expect(try await app.processResponse(JourneyResponses.dailyResponse(participant: appToken, name: "daily", version: "1.0")).status == 200)
            let processed = try await eventually("the response processed", within: .seconds(60)) {
                let list = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 1 && responses[0]["status"]?.string == "processed" ? responses[0] : nil
            }
            #expect(processed["status"]?.string == "processed")
            let (responseId, participantId) = try await platform.withResponseDatabase { postgres, logger in
                var found: [(Int64, Int64)] = []
                for try await row in try await postgres.query(
                    "SELECT r.id, p.number FROM responses r JOIN participants p ON p.id = r.participant_id", logger: logger
                ).decode((Int64, Int64).self) {
                    found.append(row)
                }
                return found.first ?? (0, 0)
            }
            var resources: [String: JSONValue] = [:]
            for path in ["Patient/\(participantId)", "ResearchSubject/\(participantId)", "QuestionnaireResponse/\(responseId)", "metadata"] {
                let reply = try await Wire.send(
                    .GET, platform.response.baseURL + "/fhir/r4/" + path, headers: [("Authorization", "Bearer \(token)")])
                #expect(reply.status == 200, "\(path): \(reply.text)")
                #expect(reply.header("Content-Type") == "application/fhir+json")
                resources[path] = reply.json
            }
            #expect(resources.count == 4)
            #expect(resources["Patient/\(participantId)"]?["identifier"]?.array?.first?["value"]?.string == String(participantId))
            #expect(!(resources["Patient/\(participantId)"]?.serialized().contains(appToken) ?? true), "the app token, a credential, never shows")
            #expect(resources["ResearchSubject/\(participantId)"]?["status"]?.string == "on-study")
            let answered = try #require(resources["QuestionnaireResponse/\(responseId)"])
            #expect(answered["questionnaire"]?.string?.hasSuffix("/Questionnaire/DEMOSTUDY/daily|1.0") == true, "\(answered)")
            #expect(answered["subject"]?["reference"]?.string == "Patient/\(participantId)")
            #expect(answered["item"]?.array?.count == 17, "15 answers, and a group per repetition of the symptoms form: \(answered)")
            let served = resources["metadata"]?["rest"]?.array?.first?["resource"]?.array ?? []
            #expect(served.compactMap { $0["type"]?.string } == [
                "ResearchStudy", "Patient", "ResearchSubject", "Questionnaire", "QuestionnaireResponse", "Observation", "Consent", "Binary",
                "Group",
            ])
            #expect(served.filter { $0["operation"] != nil }.compactMap { $0["type"]?.string } == ["Patient", "Group"])
            let checked = try await Self.validated(resources.values.map { Data($0.serialized().utf8) })
            #expect(checked.contains("checked 4 resources"), "\(checked)")
            #expect(checked.contains(", 0 failures"), "\(checked)")
            // Searches: QuestionnaireResponse by subject with its Patient included; Patient counted;
            // pages of one, followed by their next links to the end, each link valid as rows are added.
            let bySubject = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/QuestionnaireResponse?subject=Patient/\(participantId)&_include=QuestionnaireResponse:subject",
                headers: [("Authorization", "Bearer \(token)")])
            #expect(bySubject.status == 200, "\(bySubject.text)")
            #expect(bySubject.json?["type"]?.string == "searchset")
            let entries = bySubject.json?["entry"]?.array ?? []
            #expect(entries.map { $0["search"]?["mode"]?.string ?? "" } == ["match", "include"])
            #expect(entries.last?["resource"]?["resourceType"]?.string == "Patient")
            let counted = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/Patient?_summary=count", headers: [("Authorization", "Bearer \(token)")])
            #expect(counted.json?["total"]?.number == 1, "\(counted.text)")
            let second = platform.app(.android)
            _ = try await second.response("enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[1]), ("allowDataSharing", "true")])
            var next: String? = platform.response.baseURL + "/fhir/r4/Patient?_count=1"
            var pages: [[String]] = []
            while let url = next, pages.count < 5 {
                let page = try await Wire.send(.GET, url, headers: [("Authorization", "Bearer \(token)")])
                #expect(page.status == 200, "\(page.text)")
                pages.append(page.json?["entry"]?.array?.compactMap { $0["resource"]?["id"]?.string } ?? [])
                next = page.json?["link"]?.array?.first { $0["relation"]?.string == "next" }?["url"]?.string
                if pages.count == 1 {
                    // A participant enrolled while the client pages is on a later page, not lost.
                    _ = try await platform.app(.ios).response(
                        "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[2]), ("allowDataSharing", "true")])
                }
            }
            #expect(pages.count == 3, "\(pages)")
            #expect(pages.allSatisfy { $0.count == 1 }, "\(pages)")
            #expect(Set(pages.joined()).count == 3, "every participant once: \(pages)")
            let unsupported = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/Patient?name=Smith", headers: [("Authorization", "Bearer \(token)")])
            #expect(unsupported.status == 400)
            #expect(unsupported.json?["resourceType"]?.string == "OperationOutcome")
            #expect(try await Self.validated([bySubject.body, counted.body]).contains("checked 2 resources (2 Bundle), 0 failures"))
            try await Self.questionnairesFollowPublishedVersions(platform, token: token, answered: answered)

            let narrow = try await Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "ES384", scope: "system/ResearchStudy.read")
            let outOfScope = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/Patient/\(participantId)",
                headers: [("Authorization", "Bearer \(narrow.body["access_token"]?.string ?? "")")])
            #expect(outOfScope.status == 403, "a token for ResearchStudy only: \(outOfScope.text)")

            // Without a token, with a wrong one, or for another study: an OperationOutcome.
            let anonymous = try await Wire.send(.GET, platform.response.baseURL + "/fhir/r4/ResearchStudy/DEMOSTUDY")
            #expect(anonymous.status == 401)
            #expect(anonymous.json?["resourceType"]?.string == "OperationOutcome")
            let forged = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/ResearchStudy/DEMOSTUDY", headers: [("Authorization", "Bearer \(token)x")])
            #expect(forged.status == 401)
            let demo = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            var other = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
            other["studyId"] = "OTHER_STUDY"
            other["name"] = ["en": "Another team's study"]
            #expect(try await admin.send(.PUT, "/admin/v1/studies/OTHER_STUDY/draft", json: other, timeout: .seconds(120)).status == 201)
            #expect(try await admin.send(.POST, "/admin/v1/studies/OTHER_STUDY/launch", timeout: .seconds(180)).status == 200)
            let otherStudy = try await eventually("the response service knows OTHER_STUDY", within: .seconds(60)) {
                let reply = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/OTHER_STUDY/fhir-clients")
                return reply.status == 200 ? reply : nil
            }
            #expect(otherStudy.json?["clients"]?.array?.count == 0)
            let elsewhere = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/ResearchStudy/OTHER.STUDY", headers: [("Authorization", "Bearer \(token)")])
            #expect(elsewhere.status == 404, "another study is not there for this client: \(elsewhere.text)")
            #expect(elsewhere.json?["issue"]?.array?.first?["code"]?.string == "not-found")
            // OTHER_STUDY's participant and response are not this client's, even by their ids.
            let otherApp = platform.app(.android)
            let otherTokens = try await admin.tokens(responseBase: platform.response.baseURL, count: 1, studyId: "OTHER_STUDY")
            let otherEnrolled = try await otherApp.response(
                "enroll", [("studyId", "OTHER_STUDY"), ("token", try #require(otherTokens.first)), ("allowDataSharing", "true")])
            #expect(otherEnrolled.status == 200, "\(otherEnrolled.text)")
            let otherParticipant = try await platform.withResponseDatabase { postgres, logger in
                var ids: [Int64] = []
                for try await id in try await postgres.query(
                    "SELECT number FROM participants WHERE study_key = 'OTHER_STUDY'", logger: logger
                ).decode(Int64.self) { ids.append(id) }
                return ids.first ?? 0
            }
            #expect(otherParticipant == 1, "numbered in its own study from 1")
            // A Patient id is a participant's number in the client's own study: OTHER_STUDY's
            // participant 1 is not this study's participant 1, whom the same id names here.
            let ownFirst = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/Patient/\(otherParticipant)", headers: [("Authorization", "Bearer \(token)")])
            #expect(ownFirst.status == 200 && !ownFirst.text.contains("OTHER_STUDY"), "\(ownFirst.text)")
            // OTHER_STUDY's daily 1.0 is a questionnaire there, by its own id; not here.
            let otherQuestionnaire = FHIRId.questionnaire(studyId: "OTHER_STUDY", activityId: "daily", version: "1.0")
            for path in [
                "Patient/\(otherParticipant + 100)", "ResearchSubject/\(otherParticipant + 100)", "QuestionnaireResponse/\(responseId + 1000)",
                "Questionnaire/\(otherQuestionnaire)", "Questionnaire/\(otherQuestionnaire)/_history/1",
            ] {
                let reply = try await Wire.send(
                    .GET, platform.response.baseURL + "/fhir/r4/" + path, headers: [("Authorization", "Bearer \(token)")])
                #expect(reply.status == 404, "\(path): \(reply.text)")
            }

            // Every state change and read is audited.
            let actions = try await platform.withResponseDatabase { postgres, logger in
                var found: [String] = []
                let rows = try await postgres.query(
                    "SELECT action FROM audit_events WHERE action LIKE 'fhir.%' ORDER BY id", logger: logger)
                for try await action in rows.decode(String.self) { found.append(action) }
                return found
            }
            #expect(actions == [
                "fhir.client_registered", "fhir.token_issued", "fhir.token_issued", "fhir.read", "fhir.read", "fhir.read", "fhir.read",
                "fhir.search", "fhir.search", "fhir.search", "fhir.search", "fhir.search",
                "fhir.search", "fhir.search", "fhir.search", "fhir.read", "fhir.read", "fhir.read", "fhir.search", "fhir.read",
                "fhir.token_issued", "fhir.read",
            ], "\(actions)")

            // Revoked: the token stops at once, and no new one is issued.
            let revoked = try await admin.send(.DELETE, clients + "/\(clientId)")
            #expect(revoked.status == 204, "\(revoked.text)")
            let after = try await Wire.send(
                .GET, platform.response.baseURL + "/fhir/r4/ResearchStudy/DEMOSTUDY", headers: [("Authorization", "Bearer \(token)")])
            #expect(after.status == 401)
            let again = try await Self.token(tokenURL, client: clientId, keys: keysFolder, alg: "ES384")
            #expect(again.status == 401, "\(again.body)")
            let twice = try await admin.send(.DELETE, clients + "/\(clientId)")
            #expect(twice.status == 404)
            let listed = try await admin.send(.GET, clients)
            #expect(listed.json?["clients"]?.array?.first?["revokedAt"]?.string != nil, "\(listed.text)")
        }
    }

    /// Anyone can post to the token endpoint, and each request naming a client costs a lookup and
    /// a signature check: requests are counted per address. Ten at once with a limit of four a
    /// minute: whether or not a minute turns between them, some are refused with 429.
    @Test func tokenRequestsAreLimitedPerAddress() async throws {
        try await Platform.run(responseSettings: ["RATE_LIMIT_PER_MINUTE": "4"]) { platform in
            let form = Data("grant_type=client_credentials&scope=system%2F*.rs&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=a.b.c".utf8)
            var statuses: [Int] = []
            var retryAfter: String?
            for _ in 0..<10 {
                let reply = try await Wire.send(
                    .POST, platform.response.baseURL + "/fhir/r4/auth/token",
                    headers: [("Content-Type", "application/x-www-form-urlencoded")], raw: form)
                statuses.append(reply.status)
                if reply.status == 429 {
                    retryAfter = reply.header("Retry-After")
                    #expect(reply.json?["error"]?.string == "temporarily_unavailable", "\(reply.text)")
                }
            }
            #expect(statuses.count == 10)
            #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 }, "\(statuses)")
            #expect(statuses.filter { $0 == 401 }.count <= 8, "at most four a minute, in at most two minutes: \(statuses)")
            #expect(statuses.contains(429), "\(statuses)")
            #expect(retryAfter == "60")
        }
    }
}
