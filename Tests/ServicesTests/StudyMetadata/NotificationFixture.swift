import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyMetadataCore
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Study-metadata with DEMOAPP and SLEEPWELL's draft, for notifications: and one dispatch round
/// of due notifications into the outbox.
struct NotificationFixture: Sendable {
    let helper = MetadataAdmin()
    let api = WCPApp()

    struct Queued: Sendable {
        var peer: String
        var path: String
        var body: String
    }

    /// Runs `body` with the service, a super-admin token, DEMOAPP's iOS credential, the draft of
    /// SLEEPWELL (the complete example) and a database client.
    func withStudy(
        _ body: @escaping @Sendable (any TestClientProtocol, String, String, String, PostgresClient) async throws -> Void
    ) async throws {
        try await helper.withService { client, root, url in
            let (_, created) = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let credentials = try created.decodeJSON(JSONObject.self)["credentials"]
            guard case .object(let byPlatform) = credentials, case .string(let ios) = byPlatform["ios"] else {
                Issue.record("no credentials")
                return
            }
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example).0 == .created)
            try await TestDatabase.withClient(url: url) { postgres, _ in
                try await body(client, root, ios, example, postgres)
            }
        }
    }

    func dispatch(_ postgres: PostgresClient) async throws {
        let logger = Logger(label: "test")
        try await NotificationStore(client: postgres, logger: logger).dispatchDue(
            outbox: Outbox(client: postgres, logger: logger), audit: AuditLog(client: postgres, logger: logger))
    }
}
