import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// A study admin names the forwarding target, so the target is attacker-chosen input: it must
/// not carry the stored partner credentials to a new address, reach private addresses, follow
/// redirects, or read a body back into the admin API.
@Suite struct ForwardingAttackTests {
    let admin = ResponseAdmin()
    let path = "/admin/v1/studies/SLEEPWELL/forwarding"

    func problems(_ body: String) -> [String] {
        let value = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))) ?? .null
        return (value["error"]?["problems"]?.array ?? []).compactMap { $0["message"]?.text }
    }

    @Test(.needsCluster) func aChangedURLNeedsThePasswordAgain() async throws {
        try await admin.withServices { client, _, root, postgres in
            let (saved, _, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "https://partner.example.org/in", "username": "u", "password": "partner-secret"}"#)
            #expect(saved == .ok)
            // The review's move: the stored password, redacted or blank, pointed at one's own listener.
            for password in [#""***REDACTED***""#, #""""#, "null"] {
                for (url, user) in [("https://attacker.example.org/x", "u"), ("https://partner.example.org/in", "other")] {
                    let (status, body, _) = try await admin.send(
                        client, .put, path, token: root,
                        body: #"{"type": "Basic", "url": "\#(url)", "username": "\#(user)", "password": \#(password)}"#)
                    #expect(status == .unprocessableContent, "\(url) \(user) \(password)")
                    #expect(problems(body).contains { $0.hasPrefix("Enter the password again") }, "\(body)")
                }
            }
            let store = ForwardingFixture.store(on: postgres)
            #expect(
                try await store.settings(studyKey: "SLEEPWELL")?.target
                    == .basic(url: URL(string: "https://partner.example.org/in")!, username: "u", password: "partner-secret"))
        }
    }

    /// What is sent is a setting of its own: `FHIR` kept and shown; anything else refused with
    /// the target's problems in the same answer, and nothing changed.
    @Test(.needsCluster) func theFormatIsJSONOrFHIRAndARefusalChangesNothing() async throws {
        try await admin.withServices { client, _, root, postgres in
            let (saved, shown, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "https://fhir.example.org/r4", "username": "u", "password": "p", "format": "FHIR"}"#)
            #expect(saved == .ok, "\(shown)")
            #expect(shown.contains(#""fhir""#), "\(shown)")
            let (status, body, _) = try await admin.send(
                client, .put, path, token: root, body: #"{"type": "Basic", "url": "https://other.example.org/in", "format": "HL7v2"}"#)
            #expect(status == .unprocessableContent)
            #expect(problems(body).contains("format must be JSON or FHIR"), "\(body)")
            #expect(problems(body).contains("Field cannot be blank."), "the target's problems too: \(body)")
            let settings = try await ForwardingFixture.store(on: postgres).settings(studyKey: "SLEEPWELL")
            #expect(settings?.format == .fhir)
            #expect(settings?.target.url == URL(string: "https://fhir.example.org/r4"))
        }
    }

    @Test(.needsCluster) func privateLoopbackAndLinkLocalTargetsAreRefused() async throws {
        try await admin.withServices { client, _, root, _ in
            let refused = [
                "http://127.0.0.1.attacker.example/in",  // the prefix test's bypass: plain http to a name
                "https://127.0.0.1/in", "https://127.1.2.3:8083/internal/v1/whoami", "https://localhost/in",
                "https://api.localhost/in", "https://10.0.0.5/in", "https://172.16.3.4/in", "https://192.168.1.1/in",
                "https://169.254.169.254/latest/meta-data", "https://100.64.0.1/in", "https://0.0.0.0/in",
                "https://[::1]/in", "https://[fe80::1]/in", "https://[fd00::1]/in", "https://[::ffff:127.0.0.1]/in",
                "https://[64:ff9b::a00:1]/in", "https://partner@example.org/in", "ftp://example.org/in",
            ]
            for url in refused {
                for kind in ["basic", "oauth"] {
                    let body = kind == "basic"
                        ? #"{"type": "Basic", "url": "\#(url)", "username": "u", "password": "p"}"#
                        : #"{"type": "OAuth", "url": "https://example.org/in", "tokenRequestURL": "\#(url)", "tokenField": "t", "header": "X-Auth"}"#
                    let (status, reply, _) = try await admin.send(client, .put, path, token: root, body: body)
                    #expect(status == .unprocessableContent, "\(kind) \(url): \(reply)")
                }
            }
            let (_, metadataReply, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "https://169.254.169.254/latest/meta-data", "username": "u", "password": "p"}"#)
            #expect(problems(metadataReply) == ["Forwarding endpoint URL is not allowed: 169.254.169.254 is not a public address"])
            #expect(try await admin.send(client, .get, path, token: root).1.contains("\"disabled\""))
        }
    }

    @Test func theAddressPolicyClassifiesLiteralsAndNames() async {
        let strict = OutboundAddressPolicy(allowPrivate: false)
        for host in ["127.0.0.1", "localhost", "LOCALHOST", "x.localhost", "[::1]", "10.1.2.3", "169.254.0.1", "::ffff:10.0.0.1", "fc00::2"] {
            #expect(strict.refusal(host: host) != nil, "\(host)")
            #expect(await strict.check(host: host) != nil, "\(host)")
        }
        for host in ["93.184.216.34", "2606:2800:220:1::", "example.org"] {
            #expect(strict.refusal(host: host) == nil, "\(host)")
        }
        // A name that cannot be resolved is not sent to.
        #expect(await strict.check(host: "no-such-host.invalid") != nil)
        let open = OutboundAddressPolicy(allowPrivate: true)
        #expect(open.refusal(host: "127.0.0.1") == nil)
        #expect(await open.check(host: "10.0.0.1") == nil)
    }

    /// A target that redirects to an internal route and answers with a body worth reading.
    struct RedirectingTarget {
        static func run(_ body: @escaping @Sendable (Int, ReachedCounter) async throws -> Void) async throws {
            let reached = ReachedCounter()
            let router = Router()
            router.post("/forward") { _, context -> Response in
                Response(
                    status: .found,
                    headers: [.location: "/internal-secret", .contentType: "text/plain"],
                    body: .init(byteBuffer: ByteBuffer(string: "SECRET-BODY internal page")))
            }
            router.on("/internal-secret", method: .get) { _, _ -> String in
                await reached.hit()
                return "SECRET-INTERNAL"
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in try await body(client.port!, reached) }
        }
    }

    actor ReachedCounter {
        private(set) var count = 0
        func hit() { count += 1 }
    }

    @Test(.needsCluster) func redirectsAreNotFollowedAndBodiesNotShown() async throws {
        try await RedirectingTarget.run { port, reached in
            try await ResponseHarness.run(overrides: ForwardingFixture.localTargets) { h in
                let error = try await firstForwardingError(h, to: "http://127.0.0.1:\(port)/forward")
                #expect(error == "The target answered 302.")
                #expect(await reached.count == 0)
                let status = try await ForwardingFixture().store(h).status(studyKey: ForwardingFixture.study)
                #expect(status.lastError == "The target answered 302.")
            }
        }
    }

    @Test(.needsCluster) func aTargetResolvingToThisMachineIsNotSentToWithoutTheOperatorsSetting() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "u", password: "p")) { target, port in
            // Stored behind the API's back (as an older version, or a name whose address changed, would leave it).
            try await ResponseHarness.run { h in
                let error = try await firstForwardingError(h, to: "http://localhost:\(port)/forward")
                #expect(error == "The target is not allowed: localhost is this machine.")
                #expect(await target.attempts == 0)
            }
        }
    }

    /// Enrolls, stores a Basic target at `url` behind the API's back, submits a response, and
    /// returns the error of its first forwarding attempt.
    func firstForwardingError(_ h: ResponseHarness, to url: String) async throws -> String {
        let forwarding = ForwardingFixture()
        let (appToken, _) = try await forwarding.enroll(h)
        try await forwarding.store(h).save(
            .basic(url: URL(string: url)!, username: "u", password: "p"), studyKey: ForwardingFixture.study, actor: "test")
        let id = try await ProcessingFixture().submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
        return try await failedForwarding(h, id)
    }

    /// Waits for response `id`'s first failed forwarding; returns its error.
    func failedForwarding(_ h: ResponseHarness, _ id: Int64) async throws -> String {
        try await eventually("response \(id) tried once", within: .seconds(40)) {
            var tried: String?
            for try await (attempts, error) in try await h.postgres.query(
                "SELECT forward_attempts, forward_error FROM responses WHERE id = \(id)", logger: Logger(label: "test")
            ).decode((Int, String?).self) where attempts > 0 { tried = error ?? "" }
            return tried
        }
    }
}
