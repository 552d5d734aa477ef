import Foundation
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

/// Registration e-mail through a real SMTP server (STARTTLS, AUTH), including a server that is
/// down when the message is queued.
@Suite(.needsCluster) struct RegistrationMailTests {
    @Test func aVerificationMailWaitsForTheServerAndIsDeliveredOnce() async throws {
        let server = try SMTPTestServer()
        let overrides = [
            "mail.transport": "smtp", "smtp.host": "localhost", "smtp.port": String(server.port),
            "smtp.security": "starttls", "smtp.username": server.username, "smtp.password": server.password,
            "smtp.trustRootsFile": server.certificateFile,
        ]
        try await RegistrationHarness.run(overrides: overrides) { h in
            let registered = try await h.call("register", body: ["emailId": "kim@example.org", "password": "Passw0rd!"])
            #expect(registered.status == .ok)
            // The server is down: the attempt fails and the message waits, sealed.
            // Wait for the failed attempt to be recorded (claiming counts the attempt first).
            let state = try await eventually("the failed attempt recorded", within: .seconds(20), poll: .milliseconds(200)) {
                var found: [(attempts: Int, error: String?, sent: Bool, sealed: Bool)] = []
                let rows = try await h.postgres.query(
                    "SELECT attempts, last_error, sent_at IS NOT NULL, sealed_message IS NOT NULL FROM mail_outbox",
                    logger: .init(label: "t"))
                for try await row in rows.decode((Int, String?, Bool, Bool).self) { found.append(row) }
                return found
            } until: { $0.count == 1 && $0[0].error != nil }[0]
            #expect(state.attempts >= 1)
            #expect(state.error != nil)
            #expect(!state.sent && state.sealed)

            // It comes up: the retry delivers, over TLS, authenticated, once.
            try server.start()
            let received = try await server.waitForMessages(1, timeout: .seconds(30))
            #expect(received.count == 1)
            #expect(received[0].tls && received[0].authenticated)
            #expect(received[0].to == ["kim@example.org"])
            let text = RegistrationHarness.textPart(of: received[0].data.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n"))
            let code = try #require(h.secret(in: text))
            #expect(code.count == 6)
            #expect(try await h.call("verify", body: ["emailId": "kim@example.org", "code": code]).status == .ok)
            // Recorded as sent (just after the server took it), its sealed body erased.
            let stored = try await eventually("the message recorded as sent") { () -> [(Bool, Bool, String?)] in
                var found: [(Bool, Bool, String?)] = []
                for try await row in try await h.postgres.query(
                    "SELECT sent_at IS NOT NULL, sealed_message IS NULL, delivered_to FROM mail_outbox", logger: .init(label: "t")
                ).decode((Bool, Bool, String?).self) { found.append(row) }
                return found
            } until: { $0.count == 1 && $0[0].0 }
            #expect(stored.count == 1)
            #expect(stored.first?.1 == true)
            #expect(stored.first?.2?.hasPrefix("smtp://localhost:") == true)
            #expect(try server.received().count == 1)
            // /metrics counts the failed attempt and the delivery; nothing is left waiting.
            try await h.client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text.contains(#"studystack_queue_items_total{queue="mail",outcome="retry"}"#))
                #expect(text.contains(#"studystack_queue_items_total{queue="mail",outcome="done"} 1"#))
                #expect(text.contains(#"studystack_queue_depth{queue="mail"} 0"#))
                #expect(text.contains(#"studystack_queue_depth{queue="push"} 0"#))
            }
        }
        server.stop()
    }
}
