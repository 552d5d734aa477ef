import Foundation
import HTTPTypes
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
