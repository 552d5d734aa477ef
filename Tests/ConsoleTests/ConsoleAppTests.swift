import Foundation
import HTTPTypes
import Testing
import TestSupport

/// Apps through the console: a new app's credentials shown once, and its definition edited
/// through the form; only super-admins change apps.
@Suite(.needsCluster) struct ConsoleAppTests {
    @Test func anAppIsCreatedWithItsCredentialsShownOnceAndEdited() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let list = try await browser.get("/apps")
            #expect(list.status == .ok)
            #expect(list.html.contains("CONSOLEAPP"))
            let form = try await browser.get("/apps/new")
            let taken = try await browser.post(
                "/apps/new", browser.form(of: form, ["/appId": "CONSOLEAPP", "/orgId": "ORG", "/name/en": "Again", "/kind": "standalone"]))
            #expect(taken.status == .unprocessableContent)
            let created = try await browser.post(
                "/apps/new", browser.form(of: form, ["/appId": "SLEEPAPP", "/orgId": "SLEEPORG", "/name/en": "Sleep app", "/kind": "standalone"]))
            #expect(created.status == .created)
            #expect(created.html.contains("shown only this once"))
            #expect(created.html.contains("id=\"credential-ios\" value=\"ios-"))
            #expect(created.html.contains("id=\"credential-android\" value=\"android-"))
            let again = try await browser.get("/apps/SLEEPAPP")
            #expect(!again.html.contains("value=\"ios-"), "the credentials are not shown again")

            let edited = try await browser.post(
                "/apps/SLEEPAPP", browser.form(of: again, ["/name/en": "Sleep better", "/supportEmail": "help@sleep.test"]))
            #expect(edited.status == .seeOther)
            let (_, body, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/apps/SLEEPAPP", token: fixture.rootToken)
            let app = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            #expect(app["name"] as? String == "Sleep better")
            #expect(app["supportEmail"] as? String == "help@sleep.test")
            #expect(app["orgId"] as? String == "SLEEPORG", "the ids are kept")

            // The push credentials page needs the registration service, which keeps them: the
            // browser test (platform run) covers it.
        }
    }

    @Test func onlySuperAdminsChangeApps() async throws {
        try await ConsoleFixture.run { fixture in
            let password = try await fixture.makeAdmin("editor@console.test", role: "editor")
            let browser = fixture.browser
            try await browser.signIn("editor@console.test", password)
            let form = try await browser.get("/apps/new")
            let crafted = try await browser.post(
                "/apps/new", browser.form(of: form, ["/appId": "MINE", "/orgId": "ORG", "/name/en": "Mine", "/kind": "standalone"]))
            #expect(crafted.status == .forbidden)
            #expect(try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/apps/MINE", token: fixture.rootToken).0 == .notFound)
        }
    }
}

extension ConsoleAppTests {
    @Test func anAnnouncementIsSentToTheWholeAppAndListed() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/apps/CONSOLEAPP/announcements")
            #expect(page.status == .ok)
            #expect(page.html.contains("None yet."))
            let csrf = try #require(page.input("csrf"))
            let empty = try await browser.post("/apps/CONSOLEAPP/announcements", [("csrf", csrf), ("/text/en", "")])
            #expect(empty.status == .unprocessableContent)
            let badTime = try await browser.post("/apps/CONSOLEAPP/announcements", [("csrf", csrf), ("/text/en", "Maintenance"), ("at", "tomorrow")])
            #expect(badTime.status == .unprocessableContent)
            #expect(badTime.input("at") == "tomorrow")
            let sent = try await browser.post(
                "/apps/CONSOLEAPP/announcements",
                [("csrf", csrf), ("/title/en", "Maintenance"), ("/text/en", "Down tonight"), ("/text/es", "Sin servicio esta noche"), ("at", "2030-01-01T22:00")])
            #expect(sent.status == .seeOther)
            let listed = try await browser.get("/apps/CONSOLEAPP/announcements")
            #expect(listed.html.contains("Down tonight"))
            #expect(listed.html.contains("2030-01-01 22:00:00 UTC"))
            #expect(listed.html.contains("<td>announcement</td>"))
        }
    }
}
