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

    /// Dispatches until no due notification is left unsent. The service's own dispatcher polls
    /// beside this one, and a round skips the rows the other holds: one round alone could return
    /// before they are sent.
    func dispatch(_ postgres: PostgresClient) async throws {
        let logger = Logger(label: "test")
        let store = NotificationStore(client: postgres, logger: logger)
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            try await store.dispatchDue(outbox: Outbox(client: postgres, logger: logger), audit: AuditLog(client: postgres, logger: logger))
            let rows = try await postgres.query(
                """
                SELECT count(*) FROM notifications n LEFT JOIN studies s ON s.study_id = n.study_id
                WHERE n.sent_at IS NULL AND n.due_at <= now() AND (n.origin NOT IN ('study', 'message') OR s.status = 'active')
                """, logger: logger)
            var waiting = 0
            for try await count in rows.decode(Int.self) { waiting = count }
            if waiting == 0 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("\(waiting) due notifications still unsent after 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
