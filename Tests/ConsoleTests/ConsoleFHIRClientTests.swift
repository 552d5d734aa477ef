import Crypto
import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The FHIR API clients page, over the response service's admin API: a key set refused at its
/// field with nothing registered, a client registered from its JWKS file and shown with its id
/// and token URL, revoked from its row; a viewer sees the clients and no form.
@Suite(.needsCluster) struct ConsoleFHIRClientTests {
    /// A public P-384 key as a JWK Set, as a client's vendor gives it.
    static func jwks(kid: String) -> String {
        let raw = P384.Signing.PrivateKey().publicKey.rawRepresentation
        func base64URL(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return #"{"keys": [{"kty": "EC", "crv": "P-384", "kid": "\#(kid)", "x": "\#(base64URL(raw.prefix(48)))", "y": "\#(base64URL(raw.suffix(48)))"}]}"#
    }

    @Test func aStudyAdminRegistersAClientFromItsKeysFileAndRevokesIt() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let empty = try await f.browser.get("/studies/CONSOLE1/fhir-clients")
            #expect(empty.status == .ok)
            #expect(empty.html.contains("No client reads this study yet."))
            #expect(empty.html.contains(#"aria-current="page">FHIR API clients"#))
            let csrf = try #require(empty.input("csrf"))

            let refusals: [(String, String, String)] = [
                ("", "{}", "Enter a name for the client"),
                ("Warehouse", "not keys", "The keys are not a JSON Web Key Set"),
                ("Warehouse", #"{"keys": [{"kty": "EC", "crv": "P-384", "kid": "k", "x": "AA", "y": "AA", "d": "AA"}]}"#, "in key 1, d is part of a private key"),
            ]
            for (name, jwks, said) in refusals {
                let refused = try await f.browser.post("/studies/CONSOLE1/fhir-clients", [("csrf", csrf), ("name", name), ("jwks", jwks)])
                #expect(refused.status == .unprocessableContent, "\(jwks)")
                #expect(refused.html.contains(said), "\(refused.html)")
                #expect(!refused.html.contains(#"<code class="pointer">"#), "fields are named, not pointed at")
                #expect(refused.html.contains("No client reads this study yet."), "nothing registered")
            }

            let registered = try await f.browser.post(
                "/studies/CONSOLE1/fhir-clients", [("csrf", csrf), ("name", "Hospital warehouse"), ("deidentified", "yes")],
                files: [("jwksFile", "warehouse.jwks.json", Array(Self.jwks(kid: "loader-1").utf8))])
            #expect(registered.status == .seeOther, "\(registered.html)")
            let location = try #require(registered.location)
            #expect(location.hasPrefix("/studies/CONSOLE1/fhir-clients?registered="))
            let shown = try await f.browser.get(location)
            let clientId = try #require(shown.input("new-client-id"), "the client id is shown to hand on")
            #expect(location.hasSuffix(clientId))
            #expect(shown.html.contains("/fhir/r4/auth/token"))
            #expect(shown.html.contains("loader-1 (ES384)"))
            #expect(shown.html.contains("De-identified, by Bulk Data export only"))
            #expect(shown.html.contains("Live"))

            let revoked = try await f.browser.post("/studies/CONSOLE1/fhir-clients/\(clientId)/revoke", [("csrf", csrf)])
            #expect(revoked.status == .seeOther)
            let after = try await f.browser.get("/studies/CONSOLE1/fhir-clients?revoked=1")
            #expect(after.html.contains("The client is revoked"))
            #expect(after.html.contains("Revoked "))
            #expect(!after.html.contains("/fhir-clients/\(clientId)/revoke"), "a revoked client has no Revoke button")

            let password = try await f.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: f.browser.client)
            try await viewer.signIn("viewer@console.test", password)
            let page = try await viewer.get("/studies/CONSOLE1/fhir-clients")
            #expect(page.status == .ok)
            #expect(page.html.contains("Hospital warehouse"))
            #expect(!page.html.contains("Register the client"))
            let viewerCSRF = try #require(page.input("csrf"))
            let forbidden = try await viewer.post(
                "/studies/CONSOLE1/fhir-clients", [("csrf", viewerCSRF), ("name", "Mine"), ("jwks", Self.jwks(kid: "v"))])
            #expect(forbidden.status == .forbidden)
        }
    }
}
