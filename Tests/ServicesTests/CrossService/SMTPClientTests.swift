import Foundation
import SMTPClient
import Testing
import TestSupport

/// The SMTP client against a real server (aiosmtpd) that requires STARTTLS and AUTH.
@Suite struct SMTPClientTests {
    func client(_ server: SMTPTestServer, password: String? = nil, trust: Bool = true) -> SMTPClient {
        SMTPClient(configuration: .init(
            host: "localhost", port: server.port, security: .startTLS, username: server.username,
            password: password ?? server.password, trustRootsFile: trust ? server.certificateFile : nil,
            timeout: .seconds(10)))
    }

    static let message = [
        "From: StudyStack <no-reply@studystack.test>", "To: ana@example.org", "Subject: Hello", "", "first line",
        ".a line that starts with a dot", "last line", "",
    ].joined(separator: "\r\n")

    @Test(.needsCluster) func sendsOverStartTLSWithAuthentication() async throws {
        let server = try SMTPTestServer()
        try server.start()
        let reply = try await client(server).send(
            from: "StudyStack <no-reply@studystack.test>", to: ["ana@example.org"], message: Self.message)
        #expect(reply.hasPrefix("250"))
        let received = try await server.waitForMessages(1)
        #expect(received[0].tls)
        #expect(received[0].authenticated)
        #expect(received[0].from == "no-reply@studystack.test")
        #expect(received[0].to == ["ana@example.org"])
        // Dot-stuffing is undone by the server: the line arrives as written.
        #expect(received[0].data.contains("\n.a line that starts with a dot"))
        #expect(received[0].data.contains("Subject: Hello"))
    }

    @Test(.needsCluster) func refusalsSayWhetherRetryingCanHelp() async throws {
        let server = try SMTPTestServer()
        try server.start()
        // Wrong password: 535, permanent.
        let wrong = await #expect(throws: SMTPClient.Failure.self) {
            try await client(server, password: "wrong").send(from: "a@example.org", to: ["b@example.org"], message: Self.message)
        }
        #expect(wrong?.permanent == true)
        #expect(wrong?.stage == "AUTH")
        // A refused recipient: 550, permanent.
        let bounced = await #expect(throws: SMTPClient.Failure.self) {
            try await client(server).send(from: "a@example.org", to: ["bounce@example.org"], message: Self.message)
        }
        #expect(bounced?.permanent == true)
        #expect(bounced?.stage == "RCPT TO")
        // A certificate nobody vouches for: refused, and worth retrying once fixed.
        let untrusted = await #expect(throws: SMTPClient.Failure.self) {
            try await client(server, trust: false).send(from: "a@example.org", to: ["b@example.org"], message: Self.message)
        }
        #expect(untrusted?.permanent == false)
        #expect(try server.received().isEmpty)
        // Nobody listening: temporary.
        server.stop()
        let down = await #expect(throws: SMTPClient.Failure.self) {
            try await client(server).send(from: "a@example.org", to: ["b@example.org"], message: Self.message)
        }
        #expect(down?.permanent == false)
    }

    @Test func credentialsAreNeverSentWithoutTLS() async throws {
        let plain = SMTPClient(configuration: .init(
            host: "localhost", port: 9, security: .none, username: "u", password: "p", timeout: .seconds(2)))
        await #expect(throws: SMTPClient.Failure.self) {
            try await plain.send(from: "a@example.org", to: ["b@example.org"], message: Self.message)
        }
    }
}
