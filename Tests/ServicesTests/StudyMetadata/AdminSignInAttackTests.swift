import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import Testing
import TestSupport

/// Admin sign-in under attack: a burst of guesses cannot outrun the lockout, and sign-in is rate
/// limited per client address and per account.
@Suite(.needsCluster) struct AdminSignInAttackTests {

    func withService(
        overrides: [String: String] = [:], _ body: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            var settings = ["studystack.adminEmail": MetadataAdmin.adminEmail, "studystack.adminPassword": MetadataAdmin.adminPassword]
            settings.merge(overrides) { $1 }
            let reader = TestConfiguration.reader(for: .studyMetadata, databaseURL: url, overrides: settings)
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "admin-attack-test"))
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                try await body(client, url)
            }
        }
    }

    func login(_ client: some TestClientProtocol, _ password: String, email: String = MetadataAdmin.adminEmail, from address: String? = nil)
        async throws -> HTTPResponse.Status
    {
        var headers: HTTPFields = [:]
        if let address { headers[.xForwardedFor] = address }
        return try await client.execute(
            uri: "/admin/v1/login", method: .post, headers: headers,
            body: ByteBuffer(bytes: try JSONEncoder().encode(["email": email, "password": password]))
        ) { $0.status }
    }

    @Test func fortyWrongPasswordsSentTogetherCheckAtMostFive() async throws {
        // The per-address limit is lifted so that only the lockout stands between the burst and bcrypt.
        try await withService(overrides: ["rateLimit.perMinute": "1000"]) { client, url in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<40 { group.addTask { try await login(client, "Wrong-pass\(index)") } }
                var all: [HTTPResponse.Status] = []
                for try await status in group { all.append(status) }
                return all
            }
            try #require(statuses.count == 40)
            let checked = statuses.filter { $0 == .unauthorized }.count
            #expect(checked <= 5, "\(checked) passwords were checked")
            #expect(statuses.filter { $0 == .forbidden }.count == 40 - checked)
            // The right password now meets the lock.
            #expect(try await login(client, MetadataAdmin.adminPassword) == .forbidden)
            let failures = try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    "SELECT count(*)::int FROM audit_events WHERE action = 'admin.login_failed'", logger: logger)
                var count = 0
                for try await value in rows.decode(Int.self) { count = value }
                return count
            }
            #expect(failures == checked)
        }
    }

    @Test func aRightPasswordClearsTheCountOfEarlierMistakes() async throws {
        try await withService { (client, _) async throws in
            for _ in 0..<4 { #expect(try await login(client, "Wrong-pass1") == .unauthorized) }
            #expect(try await login(client, MetadataAdmin.adminPassword) == .ok)
            for _ in 0..<4 { #expect(try await login(client, "Wrong-pass1") == .unauthorized) }
            #expect(try await login(client, MetadataAdmin.adminPassword) == .ok)
        }
    }

    @Test func aHugeEMailAddressKeepsItsRateLimitRowSmall() async throws {
        try await withService { (client, url) async throws in
            let huge = String(repeating: "a", count: 1_000_000) + "@studystack.test"
            #expect(try await login(client, "Wrong-pass1", email: huge) == .unauthorized)
            let longest = try await TestDatabase.withClient(url: url) { postgres, logger in
                var length = -1
                for try await value in try await postgres.query(
                    "SELECT max(length(bucket))::int FROM request_rate_windows", logger: logger
                ).decode(Int.self) { length = value }
                return length
            }
            #expect((1..<200).contains(longest), "\(longest)")
        }
    }

    @Test func signInIsRateLimitedPerAddressAndPerAccount() async throws {
        try await withService(overrides: ["rateLimit.perMinute": "8", "rateLimit.trustedProxies": "127.0.0.1"]) { (client, _) async throws in
            // Per address: unknown accounts never lock, so only the limit stops this.
            for index in 0..<8 {
                #expect(try await login(client, "Wrong-pass1", email: "nobody\(index)@studystack.test", from: "203.0.113.7") == .unauthorized)
            }
            #expect(try await login(client, "Wrong-pass1", email: "nobody@studystack.test", from: "203.0.113.7") == .tooManyRequests)
            // Another address is not held back by the first one's limit.
            #expect(try await login(client, "Wrong-pass1", email: "nobody@studystack.test", from: "203.0.113.8") == .unauthorized)

            // Per account: guesses at one (unknown) account from ever-new addresses.
            for index in 0..<8 {
                #expect(try await login(client, "Wrong-pass1", email: "target@studystack.test", from: "198.51.100.\(index)") == .unauthorized)
            }
            #expect(try await login(client, "Wrong-pass1", email: "TARGET@studystack.test", from: "198.51.100.200") == .tooManyRequests)
        }
    }
}
