import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ServiceKit
import ServiceKitHTTP
import Testing
import TestSupport

/// Behind a trusted reverse proxy, rate limits key on the address it forwarded for, not on the
/// proxy (which every participant would share), and a client cannot choose its own bucket.
@Suite struct RegistrationClientAddressTests {
    @Test func aTrustedProxyListThatIsNotAddressesIsRefusedAtStart() {
        let reader = TestConfiguration.reader(
            for: .registration, databaseURL: "postgres://nobody@127.0.0.1:9/unused",
            overrides: ["rateLimit.trustedProxies": "10.0.0.0/8, proxy.internal"])
        #expect(throws: ConfigurationError.self) { try ServiceSettings(reader: reader, descriptor: RegistrationService.descriptor) }
    }

    @Test(.needsCluster) func limitsFollowTheForwardedAddressFromATrustedProxyOnly() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .registration, databaseURL: url,
                overrides: ["rateLimit.perMinute": "2", "rateLimit.trustedProxies": "127.0.0.1/32, ::1"])
            let app = try RegistrationService.buildApplication(reader: reader, logger: Logger(label: "client-address"))
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                func login(forwardedFor: String?) async throws -> HTTPResponse.Status {
                    var headers: HTTPFields = [
                        HTTPField.Name("applicationId")!: "DEMOAPP", HTTPField.Name("orgId")!: "DEMOORG",
                        .contentType: "application/json",
                    ]
                    if let forwardedFor { headers[HTTPField.Name("X-Forwarded-For")!] = forwardedFor }
                    return try await client.execute(
                        uri: "/fdahpUserRegWS/login.api", method: .post, headers: headers,
                        body: ByteBuffer(string: #"{"emailId":"nobody@example.org","password":"Wrong-pass1"}"#)
                    ) { $0.status }
                }
                // The test client connects from 127.0.0.1, a trusted proxy here.
                #expect(try await login(forwardedFor: "203.0.113.5") == .unauthorized)
                #expect(try await login(forwardedFor: "203.0.113.5") == .unauthorized)
                #expect(try await login(forwardedFor: "203.0.113.5") == .tooManyRequests)
                // Another participant behind the same proxy is not affected.
                #expect(try await login(forwardedFor: "203.0.113.6") == .unauthorized)
                // Prepending a made-up address does not escape the limit.
                #expect(try await login(forwardedFor: "192.0.2.44, 203.0.113.5") == .tooManyRequests)
            }
        }
    }
}
