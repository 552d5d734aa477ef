import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// An admin sets an app's push credentials through study-metadata, which relays them (sealed,
/// signed) to a running registration service and keeps nothing secret itself.
@Suite(.needsCluster) struct PushCredentialAdminTests {
    static let apns = APNsCredentials(
        teamId: "TEAM123456", keyId: "KEY1234567", privateKey: P256.Signing.PrivateKey().pemRepresentation,
        topic: "org.studystack.demo", environment: .sandbox)

    /// study-metadata (router) talking to a live registration service; `registrationURL` nil
    /// points it at an address where nothing listens.
    func withServices(
        registrationUp: Bool = true,
        _ body: @escaping @Sendable (any TestClientProtocol, String, PostgresClient, PostgresClient) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { registrationURL in
            let registration = try RegistrationService.buildApplication(
                reader: TestConfiguration.reader(for: .registration, databaseURL: registrationURL),
                logger: Logger(label: "registration"))
            try await registration.test(.live) { registrationClient in
                try await TestApplication.waitUntilReady(registrationClient)
                let peer = registrationUp ? "http://127.0.0.1:\(registrationClient.port!)" : TestConfiguration.unreachablePeer
                try await TestDatabase.withFreshDatabase { metadataURL in
                    let reader = TestConfiguration.reader(
                        for: .studyMetadata, databaseURL: metadataURL,
                        overrides: [
                            "studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!",
                            "registration.url": peer, "response.url": try await SharedResponsePeer.url(),
                        ])
                    let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "metadata"))
                    try await app.test(.router) { client in
                        try await TestApplication.waitUntilReady(client)
                        let root = try await MetadataAdmin().login(client, "root@studystack.test", "Sup3r-Secret!")
                        #expect(try await MetadataAdmin().send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
                        try await TestDatabase.withClient(url: metadataURL) { metadata, _ in
                            try await TestDatabase.withClient(url: registrationURL) { registrationDB, _ in
                                try await body(client, root, metadata, registrationDB)
                            }
                        }
                    }
                }
            }
        }
    }

    func send(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String, body: Data? = nil)
        async throws -> (HTTPResponse.Status, JSONValue?)
    {
        try await client.execute(
            uri: uri, method: method, headers: [.authorization: "Bearer \(token)"], body: body.map { ByteBuffer(bytes: $0) }
        ) { ($0.status, try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: $0.body))) }
    }

    /// Every text column of every table of a database, joined: to show a secret is nowhere in it.
    func everything(_ postgres: PostgresClient) async throws -> String {
        let rows = try await postgres.query(
            """
            SELECT string_agg(t::text, ' ') FROM (
                SELECT row_to_json(a)::text AS t FROM audit_events a
                UNION ALL SELECT convert_from(body, 'UTF8') FROM internal_outbox
            ) x
            """, logger: Logger(label: "test"))
        for try await text in rows.decode(String?.self) { return text ?? "" }
        return ""
    }

    @Test func credentialsAreRelayedSealedAndOnlySummariesComeBack() async throws {
        try await withServices { client, root, metadata, registration in
            let (stored, summary) = try await send(
                client, .put, "/admin/v1/apps/DEMOAPP/push/ios", token: root, body: JSONEncoder().encode(Self.apns))
            #expect(stored == .ok)
            #expect(summary?["provider"]?.text == "apns")
            #expect(summary?["environment"]?.text == "sandbox")
            #expect(summary?["publicKeySHA256"]?.text?.count == 64)
            let (listed, list) = try await send(client, .get, "/admin/v1/apps/DEMOAPP/push", token: root)
            #expect(listed == .ok)
            if case .array(let items)? = list?["credentials"] {
                #expect(items.compactMap { $0["keyId"]?.text } == ["KEY1234567"])
            } else {
                Issue.record("no credentials listed: \(String(describing: list))")
            }
            // The key is in neither database in clear: only registration holds it, sealed.
            #expect(!(try await everything(metadata)).contains("PRIVATE KEY"))
            let sealed = try await registration.query("SELECT sealed FROM push_credentials", logger: Logger(label: "test"))
            let sealedRows = try await sealed.decode(ByteBuffer.self).collect()
            try #require(sealedRows.count == 1)
            for bytes in sealedRows {
                #expect(!String(decoding: bytes.readableBytesView, as: UTF8.self).contains("PRIVATE KEY"))
            }
            let audit = try await metadata.query(
                "SELECT count(*)::int FROM audit_events WHERE action = 'app.push_credentials_set'", logger: Logger(label: "test"))
            #expect((try await audit.decode(Int.self).single()) == 1)

            // Refusals: problems relayed, an unknown app or platform, a missing session.
            var bad = Self.apns
            bad.topic = "no spaces allowed"
            let (invalid, problems) = try await send(
                client, .put, "/admin/v1/apps/DEMOAPP/push/ios", token: root, body: JSONEncoder().encode(bad))
            #expect(invalid == .unprocessableContent)
            if case .array(let items)? = problems?["error"]?["problems"] {
                #expect(items.compactMap { $0["pointer"]?.text } == ["/topic"])
            } else {
                Issue.record("no problems: \(String(describing: problems))")
            }
            #expect(try await send(client, .put, "/admin/v1/apps/NOAPP/push/ios", token: root, body: Data("{}".utf8)).0 == .notFound)
            #expect(try await send(client, .put, "/admin/v1/apps/DEMOAPP/push/web", token: root, body: Data("{}".utf8)).0 == .notFound)
            #expect(try await send(client, .get, "/admin/v1/apps/DEMOAPP/push", token: "nope").0 == .unauthorized)

            #expect(try await send(client, .delete, "/admin/v1/apps/DEMOAPP/push/ios", token: root).0 == .noContent)
            #expect(try await send(client, .delete, "/admin/v1/apps/DEMOAPP/push/ios", token: root).0 == .notFound)
        }
    }

    @Test func anUnreachableRegistrationServiceChangesNothing() async throws {
        try await withServices(registrationUp: false) { client, root, metadata, _ in
            let (status, body) = try await send(
                client, .put, "/admin/v1/apps/DEMOAPP/push/ios", token: root, body: JSONEncoder().encode(Self.apns))
            #expect(status == .badGateway)
            #expect(body?["error"]?["message"]?.text == "the registration service could not be reached; nothing was changed, try again")
            #expect(!(try await everything(metadata)).contains("PRIVATE KEY"))
        }
    }
}
