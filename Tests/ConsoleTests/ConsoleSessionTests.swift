import Configuration
import ConsoleService
import Foundation
import HTTPTypes
import Logging
import ServiceKitHTTP
import Testing
import TestSupport

/// Signing in and out of the console, and the attacks on its session: no cookie, a forged or
/// altered cookie, a form without the session's token, a token revoked elsewhere.
@Suite(.needsCluster) struct ConsoleSessionTests {
    @Test func aPageWithoutASessionSendsTheBrowserToSignIn() async throws {
        try await ConsoleFixture.run { fixture in
            let page = try await fixture.browser.get("/studies/CONSOLE1/basics")
            #expect(page.status == .seeOther)
            #expect(page.location == "/signin?next=%2Fstudies%2FCONSOLE1%2Fbasics")
            #expect(!page.html.contains("Console study"))
        }
    }

    @Test func signingInSealsTheSessionInAStrictHttpOnlyCookie() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            let form = try await browser.get("/signin")
            #expect(form.status == .ok)
            let csrf = try #require(form.input("csrf"))
            let wrong = try await browser.post(
                "/signin", [("csrf", csrf), ("email", ConsoleFixture.rootEmail), ("password", "Not-The-Passw0rd!")])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.html.contains("e-mail or password is wrong"))
            #expect(browser.cookies.keys.contains("studystack_session") == false)

            let again = try #require(wrong.input("csrf"))
            let signedIn = try await browser.post(
                "/signin",
                [("csrf", again), ("next", "/studies/CONSOLE1"), ("email", ConsoleFixture.rootEmail), ("password", ConsoleFixture.rootPassword)])
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.location == "/studies/CONSOLE1")
            let line = try #require(browser.lastSetCookies.first { $0.hasPrefix("studystack_session=") })
            #expect(line.contains("HttpOnly"))
            #expect(line.contains("SameSite=Strict"))
            #expect(line.contains("Path=/"))
            #expect(!line.contains("Secure"), "plain http: a Secure cookie would never come back")
            let overview = try await browser.get("/studies/CONSOLE1")
            #expect(overview.status == .ok)
            #expect(overview.html.contains("Console study"))
        }
    }

    @Test func aSignInFormFromElsewhereIsRefused() async throws {
        try await ConsoleFixture.run { fixture in
            // No sign-in cookie: the form did not come from this console (login CSRF).
            let page = try await fixture.browser.post(
                "/signin", [("csrf", "made-up"), ("email", ConsoleFixture.rootEmail), ("password", ConsoleFixture.rootPassword)])
            #expect(page.status == .forbidden)
            #expect(fixture.browser.cookies["studystack_session"] == nil)
        }
    }

    @Test func aNextAddressOutsideTheConsoleIsNotFollowed() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            for next in ["//evil.example/x", "https://evil.example/", "/\\evil.example"] {
                let csrf = try #require(try await browser.get("/signin").input("csrf"))
                let page = try await browser.post(
                    "/signin", [("csrf", csrf), ("next", next), ("email", ConsoleFixture.rootEmail), ("password", ConsoleFixture.rootPassword)])
                #expect(page.location == "/", "next \(next)")
                browser.cookies = [:]
            }
        }
    }

    @Test func aPostWithoutTheSessionsFormTokenIsRefusedAndChangesNothing() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let before = try await fixture.draft()
            let page = try await browser.get("/studies/CONSOLE1/basics")
            var fields = browser.form(of: page, ["/tagline/en": "Changed by a forged form"])
            fields.removeAll { $0.0 == "csrf" }
            let missing = try await browser.post("/studies/CONSOLE1/basics", fields)
            #expect(missing.status == .forbidden)
            let wrong = try await browser.post("/studies/CONSOLE1/basics", fields + [("csrf", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")])
            #expect(wrong.status == .forbidden)
            let after = try await fixture.draft()
            #expect(after.etag == before.etag)
            #expect(after.json["tagline"] as? String == "Before")
        }
    }

    @Test func aSessionCookieAlteredByOneByteIsRefused() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let sealed = try #require(browser.cookies["studystack_session"])
            #expect(try await browser.get("/studies/CONSOLE1").status == .ok)
            var bytes = Array(sealed)
            let index = bytes.count / 2
            bytes[index] = bytes[index] == "A" ? "B" : "A"
            browser.cookies["studystack_session"] = String(bytes)
            let page = try await browser.get("/studies/CONSOLE1")
            #expect(page.status == .seeOther)
            #expect(page.location?.hasPrefix("/signin") == true)
        }
    }

    @Test func signingOutRevokesTheTokenEverywhere() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            let studies = try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let sealed = try #require(browser.cookies["studystack_session"])
            let csrf = try #require(studies.input("csrf"))
            let out = try await browser.post("/signout", [("csrf", csrf)])
            #expect(out.status == .seeOther)
            #expect(out.location == "/signin")
            #expect(browser.cookies["studystack_session"] == nil)
            // The cookie, kept by an attacker or another tab, no longer opens anything: the token
            // inside it was revoked at study-metadata, so every console replica refuses it too.
            browser.cookies["studystack_session"] = sealed
            let replay = try await browser.get("/studies/CONSOLE1")
            #expect(replay.status == .seeOther)
            #expect(replay.location == "/signin?ended=1")
            #expect(browser.cookies["studystack_session"] == nil)
        }
    }

    @Test func everyPageCarriesTheSecurityHeadersErrorsToo() async throws {
        try await ConsoleFixture.run { fixture in
            for path in ["/signin", "/no-such-page", "/static/console.css"] {
                let page = try await fixture.browser.get(path)
                let policy = try #require(page.headers[.contentSecurityPolicy], "\(path)")
                #expect(policy.contains("script-src 'self'"))
                #expect(!policy.contains("unsafe-inline"))
                #expect(policy.contains("frame-ancestors 'none'"))
                #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                #expect(page.headers[.xContentTypeOptions] == "nosniff")
            }
            let missing = try await fixture.browser.get("/no-such-page")
            #expect(missing.status == .notFound)
            #expect(missing.headers[.contentType]?.hasPrefix("text/html") == true)
        }
    }
}

/// Every route the console mounts has an operation in `docs/openapi/console.yaml`, and every
/// documented operation exists.
@Suite struct ConsoleOpenAPICoverageTests {
    @Test func theConsolesRoutesAreAllDocumented() throws {
        let catalog = RouteCatalog()
        _ = try ConsoleService.buildApplication(
            reader: ConfigReader(provider: InMemoryProvider(values: [
                "console.key": .init(.string(ConsoleFixture.consoleKey), isSecret: true)
            ])),
            logger: Logger(label: "routes"), routeCatalog: catalog)
        let mounted = Set(catalog.routes.map { "\($0.method) \(OpenAPIDocuments.openAPIPath($0.path))" })
        #expect(mounted.count >= 10)
        let own = try OpenAPIDocuments.operations(in: ["console.yaml"])
        let shared = try OpenAPIDocuments.operations(in: ["study-metadata-internal.yaml"])
        #expect(mounted.subtracting(own.union(shared)).sorted() == [], "routes without a documented operation")
        #expect(own.subtracting(mounted).sorted() == [], "documented operations without a route")
    }
}
