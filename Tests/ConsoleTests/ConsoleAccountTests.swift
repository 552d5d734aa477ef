import Foundation
import HTTPTypes
import Testing
import TestSupport

/// Accounts through the console: a super-admin invites, the invitee sets a password with the code
/// and signs in, a study admin gives and removes a role on the study's Team page, and the audit
/// log shows it; each refused to whoever may not.
@Suite(.needsCluster) struct ConsoleAccountTests {
    @Test func anInvitedAdminJoinsAndIsGivenARoleOnTheTeamPage() async throws {
        try await ConsoleFixture.run { fixture in
            let root = fixture.browser
            try await root.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let admins = try await root.get("/admins")
            #expect(admins.status == .ok)
            #expect(admins.html.contains(ConsoleFixture.rootEmail))
            let invited = try await root.post("/admins", [("csrf", try #require(admins.input("csrf"))), ("email", "new@console.test"), ("role", "admin")])
            #expect(invited.status == .created)
            let codeStart = try #require(invited.html.range(of: "id=\"invitation-code\">"))
            let code = String(invited.html[codeStart.upperBound...].prefix { $0 != "<" })
            #expect(code.count >= 40)
            #expect(!(try await root.get("/admins")).html.contains(code), "the code is shown once")

            // The invitee, in a browser of their own.
            let invitee = Browser(client: fixture.browser.client)
            let form = try await invitee.get("/invitation")
            let csrf = try #require(form.input("csrf"))
            let weak = try await invitee.post("/invitation", [("csrf", csrf), ("code", code), ("password", "short"), ("again", "short")])
            #expect(weak.status == .unprocessableContent)
            let again = try #require(weak.input("csrf"))
            let accepted = try await invitee.post(
                "/invitation", [("csrf", again), ("code", code), ("password", "New-Admin-Passw0rd!"), ("again", "New-Admin-Passw0rd!")])
            #expect(accepted.status == .seeOther)
            #expect(accepted.location == "/signin?ready=1")
            let studies = try await invitee.signIn("new@console.test", "New-Admin-Passw0rd!")
            #expect(!studies.html.contains("/studies/CONSOLE1"), "no role yet")
            #expect(try await invitee.get("/admins").status == .forbidden, "only super-admins list accounts")

            // The study admin gives them the editor role by e-mail.
            let team = try await root.get("/studies/CONSOLE1/team")
            #expect(team.status == .ok)
            let teamCSRF = try #require(team.input("csrf"))
            let unknown = try await root.post("/studies/CONSOLE1/team", [("csrf", teamCSRF), ("email", "nobody@console.test"), ("role", "editor")])
            #expect(unknown.status == .unprocessableContent)
            let granted = try await root.post("/studies/CONSOLE1/team", [("csrf", teamCSRF), ("email", "new@console.test"), ("role", "editor")])
            #expect(granted.status == .seeOther)
            #expect(try await root.get("/studies/CONSOLE1/team").html.contains("new@console.test"))
            let basics = try await invitee.get("/studies/CONSOLE1/basics")
            #expect(basics.status == .ok)
            #expect(basics.html.contains("name=\"/name/en\""), "an editor has the form")
            #expect(try await invitee.get("/studies/CONSOLE1/team").status == .forbidden, "an editor does not manage the team")

            // The audit log shows the grant; then the role is removed.
            let audit = try await root.get("/studies/CONSOLE1/audit")
            #expect(audit.status == .ok)
            #expect(audit.html.contains(#"<tr data-action="study.role_granted">"#))
            #expect(audit.html.contains("Gave a role on the study"), "said in words")
            #expect(!audit.html.contains("<code>study."), "the action as recorded is not what the row says")
            let teamPage = try await root.get("/studies/CONSOLE1/team")
            let idRange = try #require(teamPage.html.range(of: #"name="adminId" value=""#))
            let adminId = String(teamPage.html[idRange.upperBound...].prefix { $0 != "\"" })
            let removed = try await root.post("/studies/CONSOLE1/team/remove", [("csrf", teamCSRF), ("adminId", adminId)])
            #expect(removed.status == .seeOther)
            #expect(try await invitee.get("/studies/CONSOLE1/basics").status == .forbidden)
        }
    }
}

/// The whole study document: downloaded, and replaced by an edited one that the admin API
/// validates; nothing is saved from JSON that does not parse or from a page older than the draft.
@Suite(.needsCluster) struct ConsoleDocumentTests {
    @Test func theDocumentIsDownloadedAndAnEditedOneSavedWhole() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let download = try await browser.get("/studies/CONSOLE1/document.json")
            #expect(download.status == .ok)
            #expect(download.headers[.contentDisposition] == "attachment; filename=\"CONSOLE1.json\"")
            var document = try #require(try JSONSerialization.jsonObject(with: Data(download.html.utf8)) as? [String: Any])
            #expect(document["studyId"] as? String == "CONSOLE1")

            let page = try await browser.get("/studies/CONSOLE1/document")
            let csrf = try #require(page.input("csrf"))
            let revision = try #require(page.input("revision"))
            let broken = try await browser.post("/studies/CONSOLE1/document", [("csrf", csrf), ("revision", revision), ("document", "{not json")])
            #expect(broken.status == .unprocessableContent)
            #expect(broken.html.contains("This is not JSON"))
            #expect(broken.html.contains("{not json"), "what was typed is kept")

            document["tagline"] = "Edited as JSON"
            let edited = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            let saved = try await browser.post("/studies/CONSOLE1/document", [("csrf", csrf), ("revision", revision), ("document", edited)])
            #expect(saved.status == .seeOther)
            #expect(try await fixture.draft().json["tagline"] as? String == "Edited as JSON")

            // An edited file chosen instead (the page's form is multipart): it wins over the text.
            let current = try #require(try await browser.get("/studies/CONSOLE1/document").input("revision"))
            document["tagline"] = "Uploaded as a file"
            let file = try JSONSerialization.data(withJSONObject: document)
            let uploaded = try await browser.post(
                "/studies/CONSOLE1/document", [("csrf", csrf), ("revision", current), ("document", "{ignored")],
                files: [("documentFile", "CONSOLE1.json", Array(file))])
            #expect(uploaded.status == .seeOther)
            #expect(try await fixture.draft().json["tagline"] as? String == "Uploaded as a file")
            // A file that is not text is refused as such, and nothing changes.
            let binary = try await browser.post(
                "/studies/CONSOLE1/document", [("csrf", csrf), ("revision", current)], files: [("documentFile", "photo.jpg", [0xFF, 0xD8, 0xFF, 0xE0])])
            #expect(binary.status == .badRequest)
            #expect(binary.html.contains("not a text file"))
            #expect(try await fixture.draft().json["tagline"] as? String == "Uploaded as a file")
            // A multipart form without the session's form token is refused like any other.
            document["tagline"] = "Forged"
            let forgedFile = try JSONSerialization.data(withJSONObject: document)
            let forged = try await browser.post(
                "/studies/CONSOLE1/document", [("revision", current)], files: [("documentFile", "x.json", Array(forgedFile))])
            #expect(forged.status == .forbidden)
            #expect(try await fixture.draft().json["tagline"] as? String == "Uploaded as a file")

            // The same page again: its revision is old now, and the draft is not overwritten.
            document["tagline"] = "From an old page"
            let stale = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            let refused = try await browser.post("/studies/CONSOLE1/document", [("csrf", csrf), ("revision", revision), ("document", stale)])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("changed since it was read"))
            #expect(try await fixture.draft().json["tagline"] as? String == "Uploaded as a file")
        }
    }
}
