import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// Forwarding as the suites set it up: the study, the setting that lets targets on 127.0.0.1 be
/// used, the store with the tests' key, an enrollment, and waiting for a response to be forwarded.
struct ForwardingFixture: Sendable {
    static let study = ProcessingFixture.study

    /// The targets here listen on 127.0.0.1, which only an operator's setting opens.
    static let localTargets = ["forwarding.allowPrivateTargets": "true"]

    func store(_ h: ResponseHarness) -> ForwardingStore { Self.store(on: h.postgres) }

    /// The forwarding store over `postgres`, with the tests' encryption key.
    static func store(on postgres: PostgresClient) -> ForwardingStore {
        let logger = Logger(label: "test")
        return ForwardingStore(
            client: postgres, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!,
            audit: AuditLog(client: postgres, logger: logger), logger: logger)
    }

    /// Enrolls with a fresh token; returns the app token and the enrollment token.
    func enroll(_ h: ResponseHarness) async throws -> (String, String) {
        try await h.studyEvent(Self.study)
        let token = try #require(try await h.tokens(1, study: Self.study).first)
        let (_, enrolled, _) = try await h.call(
            "mobileappstudy-enroll.api", json: ["studyId": Self.study, "token": token, "allowDataSharing": "true"])
        return (try #require(enrolled["data"]?["appToken"]?.text), token)
    }

    /// Waits until response `id` is forwarded; returns its forwarding attempts before success.
    func forwarded(_ h: ResponseHarness, _ id: Int64, within limit: Duration = .seconds(40)) async throws -> Int {
        try await eventually("response \(id) forwarded", within: limit) { () -> Int? in
            for try await (status, attempts) in try await h.postgres.query(
                "SELECT status, forward_attempts FROM responses WHERE id = \(id)", logger: Logger(label: "test")
            ).decode((String, Int).self) where status == "forwarded" { return attempts }
            return nil
        }
    }
}
