import Foundation
import InternalContracts
import HTTPTypes
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// App settings from study-metadata, and what they drive here: the app's own e-mail texts and
/// sender, `feedback`, `contactUs` and `versionInfo`.
@Suite(.needsCluster) struct RegistrationSupportMailTests {
    static func app(revision: Int = 1) -> AppDefinition {
        AppDefinition(
            appId: "DEMOAPP", orgId: "DEMOORG", name: "Demo", kind: .gateway,
            ios: .init(latestVersion: "2.\(revision)", forceUpdate: true), android: nil,
            supportEmail: "support@example.org", feedbackEmail: "feedback@example.org",
            mail: AppMail(
                fromAddress: "studies@example.org", fromName: "Demo Studies",
                verification: .init(subject: "Demo code", body: "<p>Your Demo code: <b><<< TOKEN HERE >>></b></p>"),
                feedback: .init(subject: "[feedback] <<< TOKEN HERE >>>", body: "<div><<< TOKEN HERE >>></div>")))
    }

    func mailRows(_ h: RegistrationHarness) async throws -> Int {
        let rows = try await h.postgres.query("SELECT count(*)::int FROM mail_outbox", logger: Logger(label: "test"))
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    @Test func appSettingsKeepTheNewestRevisionAndOnlyStudyMetadataSendsThem() async throws {
        try await RegistrationHarness.run { h in
            let (first, reply) = try await h.sendApp(Self.app(revision: 2), revision: 2)
            #expect(first == .ok)
            #expect(reply["applied"] == .bool(true))
            // A late delivery of an older revision changes nothing.
            let (late, lateReply) = try await h.sendApp(Self.app(revision: 1), revision: 1)
            #expect(late == .ok)
            #expect(lateReply["applied"] == .bool(false))
            let version = try await h.call("versionInfo", method: .get)
            #expect(version.status == .ok)
            #expect(version.json["ios"]?["latestVersion"]?.text == "2.2")
            #expect(version.json["ios"]?["forceUpdate"]?.text == "true")
            #expect(version.json["android"]?["latestVersion"]?.text == "1.0")
            #expect(version.json["android"]?["forceUpdate"]?.text == "false")

            // Another service, an app id that differs from the path, an invalid definition: refused.
            #expect(try await h.sendApp(Self.app(revision: 3), revision: 3, as: .response).0 == .forbidden)
            var other = Self.app(revision: 3)
            other.appId = "OTHER"
            let mismatched = Array(try JSONEncoder().encode(AppSettingsSync(revision: 3, app: other)))
            #expect(try await h.signed(.put, (try InternalCalls.appSettings.path(["appId": "DEMOAPP"])), body: mismatched).0 == .badRequest)
            var invalid = Self.app(revision: 3)
            invalid.mail?.verification = .init(subject: "Code", body: "<p>no marker</p>")
            #expect(try await h.sendApp(invalid, revision: 3).0 == .badRequest)
            #expect(try await h.call("versionInfo", method: .get).json["ios"]?["latestVersion"]?.text == "2.2")
            // An app study-metadata never sent has no versionInfo.
            #expect(try await h.call("versionInfo", method: .get, appId: "NOAPP").status == .badRequest)
        }
    }

    @Test func anAppsOwnVerificationTextAndSenderAreUsed() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.sendApp(Self.app(), revision: 1)
            let registered = try await h.call(
                "register", body: ["emailId": "own@example.org", "password": "Passw0rd!", "appId": "org.example"])
            #expect(registered.status == .ok)
            let eml = try await h.rawMail(to: "own@example.org")
            #expect(eml.contains("From: \"Demo Studies\" <studies@example.org>\r\n"))
            #expect(eml.contains("Subject: Demo code\r\n"))
            let html = RegistrationHarness.htmlPart(of: eml)
            #expect(html.hasPrefix("<p>Your Demo code: <b>"))
            let code = try #require(html.split(separator: "<b>").last?.split(separator: "<").first)
            #expect(code.count == 6)
            #expect(try await h.call("verify", body: ["emailId": "own@example.org", "code": String(code)]).status == .ok)
        }
    }

    @Test func feedbackGoesToTheAppsAddressEscaped() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.sendApp(Self.app(), revision: 1)
            let reply = try await h.call(
                "feedback", body: ["subject": "Great <app>", "body": "<script>alert(1)</script>\nsecond line"])
            #expect(reply.status == .ok)
            #expect(reply.string("message") == "success")
            let eml = try await h.rawMail(to: "feedback@example.org")
            #expect(eml.contains("Subject: [feedback] Great <app>\r\n"))
            let html = RegistrationHarness.htmlPart(of: eml)
            #expect(html == "<div>&lt;script&gt;alert(1)&lt;/script&gt;<br>second line</div>")
            #expect(!html.contains("<script>"))
            let events = try await h.postgres.query(
                "SELECT count(*)::int FROM audit_events WHERE action = 'app.feedback_sent'", logger: Logger(label: "test"))
            #expect((try await events.decode(Int.self).single()) == 1)
        }
    }

    @Test func contactUsRepliesToTheParticipant() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.sendApp(Self.app(), revision: 1)
            let reply = try await h.call(
                "contactUs",
                body: ["subject": "Question", "body": "How long is the study?", "email": "pat@example.org", "firstName": "Pat"])
            #expect(reply.status == .ok)
            let eml = try await h.rawMail(to: "support@example.org")
            // No app template for contact: the built-in one.
            #expect(eml.contains("Subject: Contact: Question\r\n"))
            #expect(eml.contains("Reply-To: pat@example.org\r\n"))
            #expect(RegistrationHarness.htmlPart(of: eml) == "From: Pat &lt;pat@example.org&gt;<br><br>How long is the study?")
        }
    }

    @Test func badSupportMessagesAreRefusedAndQueueNothing() async throws {
        try await RegistrationHarness.run(overrides: ["rateLimit.perMinute": "8"]) { h in
            // No app settings yet: nowhere to send.
            let unconfigured = try await h.call("feedback", body: ["subject": "s", "body": "b"])
            #expect(unconfigured.status == .badRequest)
            #expect(unconfigured.statusMessage == "Feedback is not set up for this app.")
            _ = try await h.sendApp(Self.app(), revision: 1)
            let cases: [(String, [String: Any], String)] = [
                ("feedback", ["subject": "s"], "Invalid input."),
                ("feedback", ["subject": "s", "body": String(repeating: "x", count: 10_001)],
                 "The message must be at most 10000 characters."),
                // Limits count what was sent, in Unicode scalars: white space padding counts, and so
                // does each combining mark (67 letters with two marks each are 201 scalars).
                ("feedback", ["subject": "s" + String(repeating: " ", count: 200), "body": "b"],
                 "The subject must be at most 200 characters."),
                ("contactUs", ["subject": String(repeating: "a\u{301}\u{302}", count: 67), "body": "b", "email": "a@example.org"],
                 "The subject must be at most 200 characters."),
                ("contactUs", ["subject": "s", "body": "b", "email": "not-an-address"], "Please enter a valid email address."),
                ("contactUs", ["subject": "s", "body": "b", "email": "a@example.org\r\nBcc: x@example.org"],
                 "Please enter a valid email address."),
                ("contactUs", ["subject": "s", "body": "b", "email": "a@example.org", "firstName": "Pat\nBcc: x"],
                 "The first name must be one line of up to 100 characters."),
            ]
            for (name, body, message) in cases {
                let reply = try await h.call(name, body: body)
                #expect(reply.status == .badRequest, "\(name) \(body.keys.sorted())")
                #expect(reply.statusMessage == message)
            }
            #expect(try await mailRows(h) == 0)
            // The calls need no session, so they are rate-limited per client address.
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<7 { statuses.append(try await h.call("feedback", body: ["subject": "s", "body": "b"]).status) }
            #expect(statuses.last == .tooManyRequests)
        }
    }
}
