import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The messages page: who a message sent now reaches, counted by the registration service first;
/// sending only to an active study, only by its admins; the study's notifications listed.
@Suite(.needsCluster) struct ConsoleMessageTests {
    @Test func aStudyAdminSeesTheAudienceFirstAndSendsOnlyToAnActiveStudy() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let draft = try await f.browser.get("/studies/CONSOLE1/messages")
            #expect(draft.status == .ok)
            #expect(draft.html.contains(#"aria-current="page">Messages"#))
            #expect(draft.html.contains("a message is sent only while the study is active"))
            #expect(!draft.html.contains("Send a message"))
            let csrf = try #require(draft.input("csrf"))
            // Sent anyway (a crafted form): the admin API refuses, the page says why, nothing is listed.
            let refused = try await f.browser.post("/studies/CONSOLE1/messages", [("csrf", csrf), ("/text/en", "Hello")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("a message is sent only to the participants of an active study"))

            let actions = try await f.browser.get("/studies/CONSOLE1/actions")
            let launched = try await f.browser.post("/studies/CONSOLE1/actions", [("csrf", try #require(actions.input("csrf"))), ("action", "launch")])
            #expect(launched.status == .seeOther)
            let active = try await f.browser.get("/studies/CONSOLE1/messages")
            #expect(active.html.contains("Who gets a message now"))
            #expect(active.html.contains("Nobody has joined the study yet"))
            #expect(!active.html.contains("Send a message"), "no form while nobody would get it")
            #expect(active.html.contains("The study&#39;s status changed") || active.html.contains("The study's status changed") || active.html.contains("Planned in the study") || active.html.contains("None yet."))

            // An English text is needed: nothing typed is refused here, Spanish alone by the admin API.
            let blank = try await f.browser.post("/studies/CONSOLE1/messages", [("csrf", csrf), ("/text/en", "  ")])
            #expect(blank.status == .unprocessableContent)
            #expect(blank.html.contains("write the message in English"))
            let spanish = try await f.browser.post("/studies/CONSOLE1/messages", [("csrf", csrf), ("/text/es", "Hola")])
            #expect(spanish.status == .unprocessableContent)
            #expect(spanish.html.contains("needs an English (&quot;en&quot;) text"))
            let sent = try await f.browser.post("/studies/CONSOLE1/messages", [("csrf", csrf), ("/text/en", "The clinic is closed on Friday.")])
            #expect(sent.status == .seeOther)
            #expect(sent.location == "/studies/CONSOLE1/messages?sent=1")
            let listed = try await f.browser.get("/studies/CONSOLE1/messages?sent=1")
            #expect(listed.html.contains("Sent. Phones that take notifications show it within seconds"))
            #expect(listed.html.contains("<td>Message from the team</td><td></td><td>The clinic is closed on Friday.</td>"))

            // A viewer reads the list and the audience but has no form, and a crafted POST is refused.
            let password = try await f.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: f.browser.client)
            try await viewer.signIn("viewer@console.test", password)
            let page = try await viewer.get("/studies/CONSOLE1/messages")
            #expect(page.html.contains("The clinic is closed on Friday."))
            #expect(page.html.contains("Only the study&#39;s admins send messages") || page.html.contains("Only the study's admins send messages"))
            let crafted = try await viewer.post("/studies/CONSOLE1/messages", [("csrf", try #require(page.input("csrf"))), ("/text/en", "Hi")])
            #expect(crafted.status == .forbidden)
        }
    }
}
