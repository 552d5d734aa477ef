import Foundation
import HTTPTypes
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

/// Enrollment tokens are checked by unauthenticated calls: guessing them is limited per client
/// address and per study, and every check shows in `/metrics` by outcome.
@Suite(.needsCluster) struct EnrollmentTokenGuessingTests {
    /// The response service, live (so client addresses are real), with `overrides`.
    func withLiveService(
        overrides: [String: String], _ body: @escaping @Sendable (any TestClientProtocol, ResponseHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            var settings = overrides
            settings["query.databaseURL"] = try await ResponseHarness.readerURL(url)
            let reader = TestConfiguration.reader(for: .response, databaseURL: url, overrides: settings)
            let app = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "token-guessing"))
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                try await TestDatabase.withClient(url: url) { postgres, _ in
                    let h = ResponseHarness(client: client, postgres: postgres, databaseURL: url)
                    #expect(try await h.studyEvent("GUESSME") == .ok)
                    try await body(client, h)
                }
            }
        }
    }

    func validate(_ client: some TestClientProtocol, token: String, from address: String) async throws -> (HTTPResponse.Status, String) {
        try await client.execute(
            uri: "/mobileappstudy-validateenrollmenttoken.api?studyId=GUESSME&token=\(token)", method: .post,
            headers: [.xForwardedFor: address]
        ) { ($0.status, String(buffer: $0.body)) }
    }

    /// A well-formed token that was never issued (random letters with a right check letter).
    func guess() -> String {
        var generator = SystemRandomNumberGenerator()
        return EnrollmentToken.generate(using: &generator)
    }

    @Test func oneAddressGuessingIsStoppedAndCounted() async throws {
        try await withLiveService(overrides: ["rateLimit.perMinute": "5", "rateLimit.trustedProxies": "127.0.0.1"]) { client, h in
            for _ in 0..<5 {
                let (status, body) = try await validate(client, token: guess(), from: "203.0.113.9")
                #expect(status == .badRequest, "\(body)")
                #expect(body.contains("Unknown token"))
            }
            let (limited, body) = try await validate(client, token: guess(), from: "203.0.113.9")
            #expect(limited == .tooManyRequests, "\(body)")
            #expect(body.contains("\"success\":false") || body.contains("\"success\" : false"), "\(body)")
            // resolveEnrollmentToken, which names no study, shares the address's allowance.
            let (resolved, _) = try await client.execute(
                uri: "/mobileappstudy-resolveEnrollmentToken.api?token=\(guess())", method: .post,
                headers: [.xForwardedFor: "203.0.113.9"]) { ($0.status, $0.body) }
            #expect(resolved == .tooManyRequests)

            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            let lines = metrics.split(separator: "\n").filter { $0.hasPrefix("studystack_enrollment_token_checks_total{") }
            #expect(lines.contains { $0.contains("outcome=\"unknown\"") && $0.hasSuffix(" 5") }, "\(lines)")
            #expect(lines.contains { $0.contains("outcome=\"rate_limited\"") && $0.hasSuffix(" 2") }, "\(lines)")
        }
    }

    @Test func manyAddressesGuessingOneStudyAreStoppedByTheStudysLimit() async throws {
        // 1 a minute per address, so 20 a minute per study.
        try await withLiveService(overrides: ["rateLimit.perMinute": "1", "rateLimit.trustedProxies": "127.0.0.1"]) { client, _ in
            for index in 0..<20 {
                let (status, body) = try await validate(client, token: guess(), from: "198.51.100.\(index + 1)")
                #expect(status == .badRequest, "guess \(index): \(body)")
            }
            let (limited, _) = try await validate(client, token: guess(), from: "198.51.100.250")
            #expect(limited == .tooManyRequests)
        }
    }
}
