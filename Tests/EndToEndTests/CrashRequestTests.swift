import Foundation
import StudyModels
import Testing
import TestSupport

/// The single requests that once ended a process (docs/security.md, Numbers from outside), each
/// sent to the real executables: the request is refused with a 4xx (or, for a response the app
/// submits, stored and then marked in error), and every process still answers `/healthz`.
@Suite(.needsCluster) struct CrashRequestTests {
    static let huge = "9223372036854775807"

    /// Any app user (the app credential ships inside the app): a study version past every version
    /// that can exist, on each call that reads one, and a response naming such an activity version,
    /// are refused; a response naming a version that could exist but does not is stored and
    /// settles as an error, instead of asking study-metadata for ever.
    @Test func aVersionPastEveryVersionIsRefusedAndItsResponseEndsInError() async throws {
        try await Platform.run { platform in
            let app = platform.app(.ios)
            for call in ["studyUpdates", "consentDocument", "participantProperties"] {
                let reply = try await app.wcp(call, [("studyId", "DEMOSTUDY"), ("studyVersion", "1.\(Self.huge)"), ("consentVersion", "1.\(Self.huge)")])
                #expect((400..<500).contains(reply.status), "\(call): \(reply.status) \(reply.text)")
                try await Self.expectAlive(platform)
            }

            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let participant = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
            let refused = try await app.processResponse(
                JourneyResponses.dailyResponse(participant: participant, name: "daily", version: "1.\(Self.huge)"))
            #expect(refused.status == 400, "\(refused.status) \(refused.text)")
            #expect(refused.json?["success"]?.bool == false)
            #expect(refused.text.contains("is not a version"), "\(refused.text)")
            try await Self.expectAlive(platform)
            // A version that could exist but does not: stored, as the original stored it, then settled.
            let submitted = try await app.processResponse(
                JourneyResponses.dailyResponse(participant: participant, name: "daily", version: "1.999999"))
            #expect(submitted.status == 200, "the original accepts and processes later: \(submitted.text)")
            let settled = try await eventually("the poisoned response settled") {
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 1 && responses[0]["status"]?.string != "pending" ? responses[0] : nil
            }
            #expect(settled["status"]?.string == "error", "\(settled)")
            #expect(settled["errorMessage"]?.string?.contains("No published design") == true, "\(settled)")
            try await Self.expectAlive(platform)
        }
    }

    /// Any admin: a scale question whose lowest value is above its highest, with a default, saved
    /// as a whole draft and as one activity: 422 with the problem, nothing saved.
    @Test func aScaleWithItsBoundsReversedIsAProblemNotACrash() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            let draft = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            #expect(draft.status == 200)
            var document = try #require(try JSONSerialization.jsonObject(with: draft.body) as? [String: Any])
            var activities = try #require(document["activities"] as? [[String: Any]])
            let index = try #require(activities.firstIndex { $0["activityId"] as? String == "daily" })
            var steps = try #require(activities[index]["steps"] as? [[String: Any]])
            let step = try #require(steps.firstIndex { $0["key"] as? String == "sleepQuality" })
            steps[step]["format"] = ["minValue": 10, "maxValue": 1, "step": 1, "default": 5]
            activities[index]["steps"] = steps
            document["activities"] = activities

            let saved = try await admin.send(.PUT, "/admin/v1/studies/DEMOSTUDY/draft", json: document)
            #expect(saved.status == 422, "\(saved.status) \(saved.text)")
            #expect(saved.text.contains("maxValue"), "\(saved.text)")
            try await Self.expectAlive(platform)

            let activity = try await admin.send(.PUT, "/admin/v1/studies/DEMOSTUDY/draft/activities/daily", json: activities[index])
            #expect(activity.status == 422, "\(activity.status) \(activity.text)")
            try await Self.expectAlive(platform)

            let after = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            #expect(after.body == draft.body, "nothing was saved")
        }
    }

    /// A researcher's LabKey API key (a viewer's role is enough): an OFFSET past every table with
    /// `offset` added on top.
    @Test func anOffsetPastEveryTableIsRefused() async throws {
        try await Platform.run { platform in
            let key = try await Self.viewerAPIKey(platform)
            // The service's own Participant table: there from the start, whatever has been answered.
            let table = "SELECT * FROM Participant"
            for (query, offset) in [("\(table) OFFSET \(Self.huge)", "1"), (table, Self.huge), ("\(table) LIMIT \(Self.huge)", "0")] {
                let url = platform.response.baseURL + "/DEMOSTUDY/query-executeSql.api?"
                    + Wire.query([("schemaName", "mobileappstudy"), ("sql", query), ("offset", offset)])
                let reply = try await Wire.send(.GET, url, headers: [("apikey", key)])
                #expect(reply.status == 400, "\(query) offset=\(offset): \(reply.status) \(reply.text)")
                #expect(reply.text.contains("1000000000"), "the error names the bound: \(reply.text)")
                try await Self.expectAlive(platform)
            }
            let selectRows = platform.response.baseURL + "/DEMOSTUDY/query-selectRows.api?"
                + Wire.query([("schemaName", "mobileappstudy"), ("query.queryName", "Participant"), ("query.offset", Self.huge)])
            let reply = try await Wire.send(.GET, selectRows, headers: [("apikey", key)])
            #expect(reply.status == 400, "\(reply.status) \(reply.text)")
            // Still served within the bounds, and LabKey's maxRows=-1 (every row) still accepted.
            let fine = platform.response.baseURL + "/DEMOSTUDY/query-executeSql.api?"
                + Wire.query([("schemaName", "mobileappstudy"), ("sql", "\(table) LIMIT 5 OFFSET 2"), ("offset", "1"), ("maxRows", "-1")])
            #expect(try await Wire.send(.GET, fine, headers: [("apikey", key)]).status == 200)
            try await Self.expectAlive(platform)
        }
    }

    /// Any signed-in admin with a role: a console form whose row operation names a row past every
    /// list, and one whose row count is negative.
    @Test func aRowPastEveryListIsRefusedByTheConsole() async throws {
        try await Platform.run { platform in
            let port = try SMTPTestServer.freePort()
            let console = try await ServiceProcess.start(
                "console",
                environment: [
                    "CONSOLE_KEY": Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(),
                    "CONSOLE_PUBLIC_URL": "http://127.0.0.1:\(port)", "LOG_LEVEL": "warning",
                    "STUDY_METADATA_URL": platform.metadata.baseURL, "REGISTRATION_URL": platform.registration.baseURL,
                    "RESPONSE_URL": platform.response.baseURL,
                ],
                port: port)
            defer { console.stop() }
            let browser = WireBrowser(base: console.baseURL)
            try await browser.signIn(Platform.adminEmail, Platform.adminPassword)
            let page = try await browser.send(.GET, "/studies/DEMOSTUDY/overview")
            #expect(page.status == 200, "\(page.text.prefix(500))")
            let csrf = try #require(WireBrowser.input("csrf", in: page.text))
            let count = WireBrowser.input("/overview#count", in: page.text) ?? "1"
            for (op, rows) in [("down /overview/\(Self.huge)", count), ("up /overview/\(Self.huge)", count),
                               ("remove /overview/0", "-5"), ("down /overview/0", "-\(Self.huge)")] {
                let reply = try await browser.send(.POST, "/studies/DEMOSTUDY/overview", form: [
                    ("csrf", csrf), ("op", op), ("/overview#count", rows),
                ])
                #expect(reply.status == 422, "\(op) with \(rows) rows: \(reply.status)")
                #expect(try await Wire.send(.GET, console.baseURL + "/healthz").status == 200, "the console answers after \(op)")
            }
            try await Self.expectAlive(platform)
        }
    }

    /// Every service answers `/healthz`.
    static func expectAlive(_ platform: Platform) async throws {
        for service in [platform.metadata, platform.registration, platform.response] {
            #expect(service.isRunning, "\(service.name) exited; its log ends:\n\(service.logTail())")
            guard service.isRunning else { continue }
            let health = try await Wire.send(.GET, service.baseURL + "/healthz")
            #expect(health.status == 200, "\(service.name) /healthz: \(health.status)")
        }
    }

    /// An admin invited, signed up and given the viewer role on DEMOSTUDY, and an API key of theirs.
    static func viewerAPIKey(_ platform: Platform) async throws -> String {
        let admin = platform.admin
        let invited = try await admin.send(.POST, "/admin/v1/admins", json: ["email": "viewer@e2e.test"])
        #expect(invited.status == 201, "\(invited.text)")
        let id = try #require(invited.json?["id"]?.string)
        let token = try #require(invited.json?["invitation"]?["token"]?.string)
        let password = "Viewer-Passw0rd!"
        let accepted = try await Wire.send(
            .POST, admin.base + "/admin/v1/invitations/accept", json: ["token": token, "password": password])
        #expect(accepted.status == 200, "\(accepted.text)")
        let granted = try await admin.send(.PUT, "/admin/v1/studies/DEMOSTUDY/roles/\(id)", json: ["role": "viewer"])
        #expect(granted.status == 200, "\(granted.text)")
        let login = try await Wire.send(.POST, admin.base + "/admin/v1/login", json: ["email": "viewer@e2e.test", "password": password])
        let viewerToken = try #require(login.json?["token"]?.string, "\(login.text)")
        let viewer = Admin(base: admin.base, token: viewerToken)
        let created = try await viewer.send(.POST, "/admin/v1/api-keys", json: ["name": "crash test"])
        return try #require(created.json?["key"]?.string, "\(created.status) \(created.text)")
    }
}
