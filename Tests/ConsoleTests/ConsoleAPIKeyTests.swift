import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The API keys page: a key made and shown once, listed without its secret, revoked from its
/// row; refused inputs named; another admin's page holds only their own keys.
@Suite(.needsCluster) struct ConsoleAPIKeyTests {
    @Test func anAdminMakesAKeySeesItOnceAndRevokesIt() async throws {
        try await ConsoleFixture.run { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let empty = try await f.browser.get("/api-keys")
            #expect(empty.status == .ok)
            #expect(empty.html.contains("You have no API keys."))
            let csrf = try #require(empty.input("csrf"))

            for (name, days, message) in [("", "", "Give the key a name"), ("scripts", "many", "Enter a number of days"),
                                          ("scripts", "400", "A key lives 1 to 365 days.")] {
                let refused = try await f.browser.post("/api-keys", [("csrf", csrf), ("name", name), ("days", days)])
                #expect(refused.status == .unprocessableContent, "\(name) \(days)")
                #expect(refused.html.contains(message), "\(name) \(days)")
            }
            let made = try await f.browser.post("/api-keys", [("csrf", csrf), ("name", "R scripts"), ("days", "30")])
            #expect(made.status == .created)
            let key = try #require(made.input("new-key"))
            #expect(key.hasPrefix("ssk_"))

            // Listed without the secret, live.
            let listed = try await f.browser.get("/api-keys")
            #expect(!listed.html.contains(key))
            #expect(listed.html.contains("<td>R scripts</td>"))
            #expect(listed.html.contains("<td>live</td>"))
            let id = try #require(
                listed.html.components(separatedBy: #"<tr data-key=""#).dropFirst().first.map { String($0.prefix { $0 != "\"" }) })

            // Another admin sees only their own (none).
            let password = try await f.makeAdmin("other@console.test", role: "viewer")
            let other = Browser(client: f.browser.client)
            try await other.signIn("other@console.test", password)
            let theirs = try await other.get("/api-keys")
            #expect(theirs.html.contains("You have no API keys."))
            let otherCSRF = try #require(theirs.input("csrf"))
            #expect(try await other.post("/api-keys/\(id)/revoke", [("csrf", otherCSRF)]).status == .notFound)

            let revoked = try await f.browser.post("/api-keys/\(id)/revoke", [("csrf", csrf)])
            #expect(revoked.status == .seeOther)
            let after = try await f.browser.get(try #require(revoked.location))
            #expect(after.html.contains("The key is revoked"))
            #expect(after.html.contains("<td>revoked</td>"))
            #expect(!after.html.contains("/api-keys/\(id)/revoke"), "no revoke button on a revoked key")
        }
    }
}
