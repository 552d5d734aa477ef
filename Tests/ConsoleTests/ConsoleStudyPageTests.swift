import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The study builder's pages over the admin API: a save lands in the draft, a refused save says
/// where and keeps what was typed, a viewer cannot change anything, a colleague's change is not
/// overwritten unseen, and a new study never replaces an existing one.
@Suite(.needsCluster) struct ConsoleStudyPageTests {
    @Test func aSavedSectionLandsInTheDraftAndTheRestIsKept() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/basics")
            #expect(page.status == .ok)
            #expect(page.input("/name/en") == "Console study")
            let saved = try await browser.post(
                "/studies/CONSOLE1/basics",
                browser.form(of: page, ["/tagline/en": "Sleep <better> & \"more\"", "/sponsor/en": "Sleep Lab"]))
            #expect(saved.status == .seeOther)
            #expect(saved.location == "/studies/CONSOLE1/basics?saved=1")
            let draft = try await fixture.draft()
            #expect(draft.json["tagline"] as? String == "Sleep <better> & \"more\"")
            #expect(draft.json["sponsor"] as? String == "Sleep Lab")
            #expect(draft.json["timeZone"] as? String == "Europe/Madrid")
            #expect(draft.json["name"] as? String == "Console study")
            // Shown back escaped: the text is text, never markup.
            let shown = try await browser.get("/studies/CONSOLE1/basics?saved=1")
            #expect(shown.html.contains("Saved to the draft."))
            #expect(shown.html.contains("value=\"Sleep &lt;better&gt; &amp; &quot;more&quot;\""))
            #expect(!shown.html.contains("<better>"))
        }
    }

    /// The consent page links the signed document's preview in each of the study's languages;
    /// the preview is a PDF of the draft's consent, and a language the study lacks is refused.
    @Test func theConsentPageOffersThePDFPreviewInEachLanguage() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/consent")
            #expect(page.status == .ok)
            #expect(page.html.contains("Preview the signed document (PDF), English"))
            #expect(page.html.contains("/studies/CONSOLE1/consent-preview.pdf?language=en"))
            let pdf = try await browser.get("/studies/CONSOLE1/consent-preview.pdf?language=en")
            #expect(pdf.status == .ok)
            #expect(pdf.headers[.contentType] == "application/pdf")
            #expect(pdf.data.starts(with: Array("%PDF-".utf8)))
            #expect(try await browser.get("/studies/CONSOLE1/consent-preview.pdf?language=xx").status == .notFound)
        }
    }

    @Test func aRefusedSaveShowsEachProblemAtItsFieldAndKeepsWhatWasTyped() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let before = try await fixture.draft()
            let page = try await browser.get("/studies/CONSOLE1/settings")
            let refused = try await browser.post(
                "/studies/CONSOLE1/settings",
                browser.form(of: page, ["/languages": "es", "/rejoin/message/en": "Typed and kept"]))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("id=\"problems\""))
            #expect(refused.html.contains("href=\"#f-languages-field\""))
            // The message next to the field, and the field marked for assistive technology.
            let field = try #require(refused.html.range(of: "id=\"f-languages-field\""))
            let fieldHTML = refused.html[field.lowerBound...].prefix(1500)
            #expect(fieldHTML.contains("id=\"f-languages-problems\""))
            #expect(fieldHTML.contains("en"))
            #expect(refused.input("/rejoin/message/en") == "Typed and kept")
            let after = try await fixture.draft()
            #expect(after.etag == before.etag)
        }
    }

    @Test func aViewerSeesNoControlsAndACraftedPostIsRefused() async throws {
        try await ConsoleFixture.run { fixture in
            let password = try await fixture.makeAdmin("viewer@console.test", role: "viewer")
            let browser = fixture.browser
            try await browser.signIn("viewer@console.test", password)
            let page = try await browser.get("/studies/CONSOLE1/basics")
            #expect(page.status == .ok)
            #expect(page.html.contains("Console study"))
            #expect(!page.html.contains("action=\"/studies/CONSOLE1/basics\""))
            #expect(!page.html.contains("name=\"/name/en\""))
            #expect(!page.html.contains("<textarea"))
            #expect(!page.html.contains("<select"))
            let before = try await fixture.draft()
            let csrf = try #require(page.input("csrf"))
            let crafted = try await browser.post(
                "/studies/CONSOLE1/basics", [("csrf", csrf), ("/name/en", "Taken over"), ("/appId", "CONSOLEAPP")])
            #expect(crafted.status == .forbidden)
            let after = try await fixture.draft()
            #expect(after.etag == before.etag)
            #expect(after.json["name"] as? String == "Console study")
        }
    }

    @Test func aColleaguesChangeToTheSameSectionIsShownNotOverwritten() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/basics")
            // Meanwhile, a colleague renames the study through the admin API.
            var document = try await fixture.draft().json
            document["name"] = "Renamed by a colleague"
            let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await ConsoleFixture.send(fixture.metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: fixture.rootToken, body: body).0 == .ok)

            let stale = try await browser.post("/studies/CONSOLE1/basics", browser.form(of: page, ["/tagline/en": "Mine"]))
            #expect(stale.status == .conflict)
            #expect(stale.html.contains("changed while you were editing it"))
            #expect(stale.input("/tagline/en") == "Mine")
            #expect(try await fixture.draft().json["name"] as? String == "Renamed by a colleague")
            // Having seen it, the admin saves again and it goes through.
            let again = try await browser.post("/studies/CONSOLE1/basics", browser.form(of: stale, [:]))
            #expect(again.status == .seeOther)
            let draft = try await fixture.draft().json
            #expect(draft["tagline"] as? String == "Mine")
            #expect(draft["name"] as? String == "Console study")

            // A change to another section meanwhile does not stop a save, and is kept.
            let settings = try await browser.get("/studies/CONSOLE1/settings")
            var other = try await fixture.draft().json
            other["tagline"] = "Colleague's tagline"
            let otherBody = String(decoding: try JSONSerialization.data(withJSONObject: other), as: UTF8.self)
            #expect(try await ConsoleFixture.send(fixture.metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: fixture.rootToken, body: otherBody).0 == .ok)
            let saved = try await browser.post("/studies/CONSOLE1/settings", browser.form(of: settings, ["/enrolling": nil]))
            #expect(saved.status == .seeOther)
            let final = try await fixture.draft().json
            #expect(final["enrolling"] as? Bool == false)
            #expect(final["tagline"] as? String == "Colleague's tagline")
        }
    }

    /// A section's form is drawn once per draft version and kept (`SectionFormCache`), and a
    /// study's menu once for what it shows: what is kept must never outlive the draft, the apps,
    /// the role or the page it was drawn for.
    @Test func aFormOrMenuDrawnBeforeIsShownOnlyForWhatItWasDrawnFor() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            for _ in 0..<2 {
                let basics = try await browser.get("/studies/CONSOLE1/basics")
                #expect(basics.input("/name/en") == "Console study")
                #expect(basics.html.contains(#"aria-current="page">Basic information"#))
                #expect(!basics.html.contains(#"aria-current="page">Settings"#))
                let settings = try await browser.get("/studies/CONSOLE1/settings")
                #expect(settings.html.contains(#"aria-current="page">Settings"#))
                #expect(!settings.html.contains(#"aria-current="page">Basic information"#))
            }
            // A colleague saves the draft through the admin API: the next page shows their version.
            var document = try await fixture.draft().json
            document["name"] = "Renamed by a colleague"
            let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await ConsoleFixture.send(fixture.metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: fixture.rootToken, body: body).0 == .ok)
            let renamed = try await browser.get("/studies/CONSOLE1/basics")
            #expect(renamed.input("/name/en") == "Renamed by a colleague")
            #expect(renamed.html.contains(#"<a href="/studies/CONSOLE1">Renamed by a colleague</a>"#))
            #expect(renamed.html.contains("Your role: study admin"))
            #expect(!renamed.html.contains("SECONDAPP"))
            // A new app, with the draft unchanged: the app choice offers it.
            let app = #"{"appId":"SECONDAPP","orgId":"ORG","name":"Second app","kind":"standalone"}"#
            #expect(try await ConsoleFixture.send(fixture.metadata, .post, "/admin/v1/apps", token: fixture.rootToken, body: app).0 == .created)
            #expect(try await browser.get("/studies/CONSOLE1/basics").html.contains("value=\"SECONDAPP\""))
            // The same draft version for a viewer: no controls, though an editor's form was drawn.
            let password = try await fixture.makeAdmin("viewer@console.test", role: "viewer")
            browser.cookies = [:]
            try await browser.signIn("viewer@console.test", password)
            let viewed = try await browser.get("/studies/CONSOLE1/basics")
            #expect(viewed.status == .ok)
            #expect(viewed.html.contains("Renamed by a colleague"))
            #expect(viewed.html.contains("Your role: viewer"))
            #expect(!viewed.html.contains("name=\"/name/en\""))
            browser.cookies = [:]
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            #expect(try await browser.get("/studies/CONSOLE1/basics").input("/name/en") == "Renamed by a colleague")
        }
    }

    @Test func aNewStudyIsCreatedOnlyUnderAnIdThatIsFree() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let form = try await browser.get("/studies/new")
            #expect(form.status == .ok)
            let before = try await fixture.draft()
            let taken = try await browser.post(
                "/studies/new", browser.form(of: form, ["/studyId": "CONSOLE1", "/name/en": "Would replace it", "/appId": "CONSOLEAPP"]))
            #expect(taken.status == .unprocessableContent)
            #expect(taken.html.contains("href=\"#f-studyId-field\""))
            #expect(taken.html.contains("exists already"))
            #expect(try await fixture.draft().etag == before.etag)

            // An id with spaces and no title: both problems at once, the id as it was typed.
            let spaced = try await browser.post(
                "/studies/new", browser.form(of: form, ["/studyId": "UX3 sleep study", "/name/en": "", "/appId": "CONSOLEAPP"]))
            #expect(spaced.status == .unprocessableContent)
            #expect(spaced.html.contains("href=\"#f-studyId-field\""))
            #expect(spaced.html.contains("href=\"#f-name-en-field\"") || spaced.html.contains("href=\"#f-name-field\""), "the title's problem too")
            #expect(!spaced.html.contains("%20"))
            let (missing, _, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/UX3%20sleep%20study", token: fixture.rootToken)
            #expect(missing == .notFound)

            let created = try await browser.post(
                "/studies/new",
                browser.form(of: form, ["/studyId": "SLEEP2", "/name/en": "Sleep two", "/appId": "CONSOLEAPP", "/timeZone": "Asia/Tokyo"]))
            #expect(created.status == .seeOther)
            #expect(created.location == "/studies/SLEEP2/basics?created=1")
            let (status, body, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/SLEEP2/draft", token: fixture.rootToken)
            #expect(status == .ok)
            let draft = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            #expect(draft["name"] as? String == "Sleep two")
            #expect(draft["timeZone"] as? String == "Asia/Tokyo")
            #expect(try await browser.get("/").html.contains("/studies/SLEEP2"))
            // The list's search: by name or id, whatever the case.
            let found = try await browser.get("/?q=two")
            #expect(found.html.contains("/studies/SLEEP2") && !found.html.contains("/studies/CONSOLE1\""))
            #expect(try await browser.get("/?q=nothing-like-it").html.contains("No study matches."))
        }
    }
}

extension ConsoleStudyPageTests {
    @Test func aNewStudySavesUnfinishedAndThePageSaysWhatIsMissingBeforePublishing() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let form = try await browser.get("/studies/new")
            let created = try await browser.post(
                "/studies/new", browser.form(of: form, ["/studyId": "FRESH", "/name/en": "Fresh", "/appId": "CONSOLEAPP"]))
            #expect(created.status == .seeOther)
            let basics = try await browser.get(created.location ?? "")
            let saved = try await browser.post("/studies/FRESH/basics", browser.form(of: basics, ["/tagline/en": "New line"]))
            #expect(saved.status == .ok)
            #expect(saved.html.contains("Saved, but incomplete"))
            #expect(saved.html.contains("add at least one before publishing"))
            #expect(saved.input("/tagline/en") == "New line")
            // Publishing it is refused by the admin API until the consent has screens.
            let (status, _, _) = try await ConsoleFixture.send(fixture.metadata, .post, "/admin/v1/studies/FRESH/publish", token: fixture.rootToken)
            #expect(status == .unprocessableContent)
        }
    }
}
