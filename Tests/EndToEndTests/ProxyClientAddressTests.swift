import Foundation
import StudyModels
import Testing
import TestSupport

/// Behind a reverse proxy every request comes from the proxy: unless the service trusts the
/// proxy's `X-Forwarded-For`, every client shares one rate-limit bucket, and 31 bad sign-ins from
/// anyone lock out everyone. Through a real nginx that appends the header (as deploy/ sets it up),
/// two clients on two loopback addresses are counted apart, and a header a client forges names
/// no one but itself.
@Suite(.needsCluster) struct ProxyClientAddressTests {
    @Test func twoClientsBehindNginxHaveSeparateBuckets() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let port = try SMTPTestServer.freePort()
            let unused = "http://127.0.0.1:9"
            let metadata = try await ServiceProcess.start(
                "study-metadata",
                environment: [
                    "DATABASE_URL": database, "STUDYSTACK_ENCRYPTION_KEY": TestConfiguration.encryptionKey,
                    "INTERNAL_SIGNING_KEY": TestConfiguration.keys[.studyMetadata]!,
                    "INTERNAL_CALLER_KEYS": Platform.callers(.studyMetadata, accepting: [.registration, .response]),
                    "STUDY_METADATA_URL": "http://127.0.0.1:\(port)", "REGISTRATION_URL": unused, "RESPONSE_URL": unused,
                    "STUDYSTACK_ADMIN_EMAIL": Platform.adminEmail, "STUDYSTACK_ADMIN_PASSWORD": Platform.adminPassword,
                    "RATE_LIMIT_PER_MINUTE": "5", "RATE_LIMIT_TRUSTED_PROXIES": "127.0.0.1", "LOG_LEVEL": "warning",
                ],
                port: port)
            defer { metadata.stop() }
            let nginx = try await NginxProcess.start(groups: ["metadata": [port]])
            defer { nginx.stop() }
            let login = nginx.baseURL("metadata") + "/admin/v1/login"

            // Client A, at 127.0.0.2: five wrong sign-ins at five unknown accounts, then the limit.
            for index in 0..<5 {
                #expect(try Self.post(login, from: "127.0.0.2", email: "nobody\(index)@e2e.test") == 401)
            }
            #expect(try Self.post(login, from: "127.0.0.2", email: "nobody5@e2e.test") == 429)
            // Client B, at 127.0.0.3, is not held back by A's count, even when it claims to be A.
            #expect(try Self.post(login, from: "127.0.0.3", email: "someone@e2e.test") == 401)
            #expect(try Self.post(login, from: "127.0.0.3", email: "someone.else@e2e.test", forwardedFor: "127.0.0.2") == 401)
            // And A forging another address is still A.
            #expect(try Self.post(login, from: "127.0.0.2", email: "nobody6@e2e.test", forwardedFor: "198.51.100.9") == 429)
            #expect(metadata.isRunning)
        }
    }

    /// A sign-in POST from the loopback address `source` (curl binds it), with a wrong password;
    /// returns the status.
    static func post(_ url: String, from source: String, email: String, forwardedFor: String? = nil) throws -> Int {
        var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", source, "-H", "Content-Type: application/json"]
        if let forwardedFor { arguments += ["-H", "X-Forwarded-For: \(forwardedFor)"] }
        arguments += ["--data", #"{"email": "\#(email)", "password": "Wrong-Passw0rd!"}"#, url]
        return Int(try ExternalTool.run("curl", arguments)) ?? -1
    }
}
