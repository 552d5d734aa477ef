import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// Moving studies in through the console: the export chosen on the app's move-in page, a dry
/// run that reports and changes nothing, the import, and what a form left incomplete or an admin
/// who is not a super-admin is told.
@Suite(.needsCluster) struct ConsoleMoveInTests {
    @Test func aDryRunReportsAndTheImportCreatesTheStudy() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let app = try await browser.get("/apps/CONSOLEAPP")
            #expect(app.html.contains("href=\"/apps/CONSOLEAPP/move-in\""))
            let form = try await browser.get("/apps/CONSOLEAPP/move-in")
            #expect(form.status == .ok)
            let export = Array(try RecordedMyStudiesReplies.exportText(studyId: "MOVEDIN").utf8)
            let csrf = try #require(form.input("csrf"))

            let noZone = try await browser.post(
                "/apps/CONSOLEAPP/move-in", [("csrf", csrf), ("timeZone", ""), ("action", "plan")],
                files: [("exportFile", "studies.json", export)])
            #expect(noZone.status == .unprocessableContent)
            #expect(noZone.html.contains("Give the time zone the source"))

            let dry = try await browser.post(
                "/apps/CONSOLEAPP/move-in", [("csrf", csrf), ("timeZone", "UTC"), ("action", "plan")],
                files: [("exportFile", "studies.json", export)])
            #expect(dry.status == .ok)
            #expect(dry.html.contains("new: will be created"))
            #expect(dry.html.contains("Nothing was changed"))
            #expect(dry.html.contains("WeeklyTest"))
            #expect(try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/MOVEDIN/draft", token: fixture.rootToken).0 == .notFound)

            let imported = try await browser.post(
                "/apps/CONSOLEAPP/move-in", [("csrf", csrf), ("timeZone", "UTC"), ("action", "import")],
                files: [("exportFile", "studies.json", export)])
            #expect(imported.status == .ok)
            #expect(imported.html.contains("created"))
            #expect(imported.html.contains("1 of 1 here"))
            let (status, body, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/MOVEDIN/versions", token: fixture.rootToken)
            #expect(status == .ok)
            #expect(String(buffer: body).contains("\"label\":\"2.3\""))
        }
    }

    @Test func onlyASuperAdminMovesStudiesIn() async throws {
        try await ConsoleFixture.run { fixture in
            let password = try await fixture.makeAdmin("editor@console.test", role: "editor")
            let browser = fixture.browser
            try await browser.signIn("editor@console.test", password)
            let form = try await browser.get("/apps/CONSOLEAPP/move-in")
            let csrf = try #require(form.input("csrf"))
            let refused = try await browser.post(
                "/apps/CONSOLEAPP/move-in", [("csrf", csrf), ("timeZone", "UTC"), ("action", "import")],
                files: [("exportFile", "studies.json", Array(try RecordedMyStudiesReplies.exportText(studyId: "MOVEDIN").utf8))])
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("only a super-admin may do this"))
            #expect(try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/MOVEDIN/draft", token: fixture.rootToken).0 == .notFound)
        }
    }
}

/// Moving participants in through the console: the participants export chosen on the same page,
/// a dry run that changes nothing, the import sent to registration in parts, and a second import
/// that changes nothing.
@Suite(.needsCluster) struct ConsoleParticipantMoveInTests {
    /// Thirty accounts (more than one part of the console's 25), enrolled in CONSOLE1.
    static func export() throws -> [UInt8] {
        var export = MyStudiesParticipantExport(
            source: "mysql://reader@127.0.0.1:3306 (mystudies_participant_datastore, oauth_server_hydra, mystudies_response_server)",
            readAt: "2026-12-05T00:00:00Z", appId: "CONSOLEAPP", databaseTimeZone: "UTC")
        for i in 0..<30 {
            let record = MyStudiesSourceDeployment.passwordRecord("Console-Passw0rd-\(i)!", seed: "console-\(i)", expiresAt: 1_893_456_000_000)
            export.accounts.append(
                .init(userId: "user-\(i)", email: "person\(i)@example.org", status: 1, authStatus: 0, passwordHash: record.hash, passwordSalt: record.salt))
            export.enrolments.append(
                .init(userId: "user-\(i)", studyId: "CONSOLE1", participantId: "participant-\(i)", status: "enrolled", enrolledAt: "2026-10-01 09:30:00"))
        }
        export.enrolments.append(.init(userId: "user-0", studyId: "ELSEWHERE", participantId: "participant-x", status: "enrolled"))
        return Array(try JSONEncoder().encode(export))
    }

    /// CONSOLEAPP as study-metadata's outbox tells registration of it (the fixture's
    /// study-metadata has no registration address to send it to).
    static func announceApp(_ fixture: ConsoleFixture) async throws {
        let registration = try #require(fixture.registration)
        let definition = String(decoding: try JSONEncoder().encode(AppDefinition(appId: "CONSOLEAPP", orgId: "ORG", name: "Console app", kind: .gateway)), as: UTF8.self)
        try await registration.postgres.query(
            "INSERT INTO app_settings (app_id, org_id, revision, definition) VALUES ('CONSOLEAPP', 'ORG', 1, \(definition)::jsonb)",
            logger: Logger(label: "test"))
    }

    static func accounts(_ fixture: ConsoleFixture) async throws -> Int {
        let registration = try #require(fixture.registration)
        let rows = try await registration.postgres.query("SELECT count(*)::int FROM participants", logger: Logger(label: "test"))
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    @Test func aDryRunReportsAndTheImportMovesThemInInParts() async throws {
        try await ConsoleFixture.run(withPeers: true) { fixture in
            try await Self.announceApp(fixture)
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let form = try await browser.get("/apps/CONSOLEAPP/move-in")
            #expect(form.html.contains("id=\"move-in-participants-form\""))
            let csrf = try #require(form.input("csrf"))
            let path = "/apps/CONSOLEAPP/move-in/participants"

            let none = try await browser.post(path, [("csrf", csrf), ("action", "plan")])
            #expect(none.status == .unprocessableContent && none.html.contains("Choose the file studystack-import participants read wrote"))
            let wrong = try await browser.post(path, [("csrf", csrf), ("action", "plan")], files: [("participantsFile", "p.json", Array(#"{"accounts": 3}"#.utf8))])
            #expect(wrong.status == .unprocessableContent && wrong.html.contains("The file is not a participants export"))

            let dry = try await browser.post(path, [("csrf", csrf), ("action", "plan")], files: [("participantsFile", "p.json", try Self.export())])
            #expect(dry.status == .ok, "\(dry.html)")
            #expect(dry.html.contains("30 accounts read: 30 will be created"))
            #expect(dry.html.contains("30 keep their password"))
            #expect(dry.html.contains("Nothing was changed"))
            #expect(dry.html.contains("ELSEWHERE") && dry.html.contains("move the studies in first"))
            #expect(try await Self.accounts(fixture) == 0)

            let imported = try await browser.post(path, [("csrf", csrf), ("action", "import")], files: [("participantsFile", "p.json", try Self.export())])
            #expect(imported.status == .ok, "\(imported.html)")
            #expect(imported.html.contains("30 accounts read: 30 created"))
            #expect(try await Self.accounts(fixture) == 30)
            let again = try await browser.post(path, [("csrf", csrf), ("action", "import")], files: [("participantsFile", "p.json", try Self.export())])
            #expect(again.html.contains("0 created, 30 already imported"))
            #expect(try await Self.accounts(fixture) == 30)
        }
    }

    @Test func onlyASuperAdminMovesParticipantsIn() async throws {
        try await ConsoleFixture.run(withPeers: true) { fixture in
            try await ConsoleParticipantMoveInTests.announceApp(fixture)
            let password = try await fixture.makeAdmin("editor@console.test", role: "editor")
            let browser = fixture.browser
            try await browser.signIn("editor@console.test", password)
            let form = try await browser.get("/apps/CONSOLEAPP/move-in")
            let csrf = try #require(form.input("csrf"))
            let refused = try await browser.post(
                "/apps/CONSOLEAPP/move-in/participants", [("csrf", csrf), ("action", "import")],
                files: [("participantsFile", "p.json", try ConsoleParticipantMoveInTests.export())])
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("only a super-admin may"))
            #expect(try await ConsoleParticipantMoveInTests.accounts(fixture) == 0)
        }
    }
}
