import Crypto
import Foundation
import InternalContracts
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Study-metadata's API keys: made and listed by their own admin, shown once, stored hashed,
/// refused when revoked, expired or their admin loses a role; answered to the response service
/// with the admin's roles at the time of use, and their use audited.
@Suite(.needsCluster) struct APIKeyTests {
    let helper = MetadataAdmin()

    func verify(_ client: some TestClientProtocol, key: String, as caller: ServiceName = .response) async throws
        -> (HTTPResponse.Status, AdminIdentity?)
    {
        let body = Array(try JSONEncoder().encode(APIKeyQuery(keyHash: SecureToken.hash(key))))
        var headers = TestApplication.signedHeaders(
            caller: caller, to: .studyMetadata, method: .post, path: InternalCalls.apiKeys.template, body: body)
        headers[.contentType] = "application/json"
        return try await client.execute(uri: InternalCalls.apiKeys.template, method: .post, headers: headers, body: ByteBuffer(bytes: body)) {
            ($0.status, try? JSONDecoder().decode(AdminIdentity.self, from: Data(buffer: $0.body)))
        }
    }

    func auditActions(_ url: String) async throws -> [String] {
        try await TestDatabase.withClient(url: url) { postgres, _ in
            var actions: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action LIKE 'api_keys.%' ORDER BY id", logger: Logger(label: "test")
            ).decode(String.self) { actions.append(action) }
            return actions
        }
    }

    @Test func aKeyIsShownOnceStoredHashedAndActsWithItsAdminsRolesUntilRevoked() async throws {
        try await helper.withService { client, root, url in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            _ = try await helper.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root,
                body: try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8))
            let (adminId, token) = try await helper.makeAdmin(client, root: root, email: "researcher@studystack.test")
            #expect(try await helper.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(adminId)", token: root, body: #"{"role": "viewer"}"#).0 == .ok)

            let (created, createdBody) = try await helper.send(
                client, .post, "/admin/v1/api-keys", token: token, body: #"{"name": "R scripts", "expiresInDays": 30}"#)
            #expect(created == .created, "\(String(buffer: createdBody))")
            let key = try JSONDecoder.iso8601.decode(APIKeyCreated.self, from: Data(buffer: createdBody))
            #expect(key.key.hasPrefix("ssk_") && key.key.count > 40)
            #expect(abs(key.expiresAt.timeIntervalSinceNow - 30 * 86_400) < 120)

            // Listed without the secret; the database holds only its SHA-256.
            let (_, listBody) = try await helper.send(client, .get, "/admin/v1/api-keys", token: token)
            #expect(!String(buffer: listBody).contains(key.key))
            let list = try JSONDecoder.iso8601.decode(APIKeyList.self, from: Data(buffer: listBody))
            #expect(list.keys.map(\.name) == ["R scripts"])
            let stored = try await TestDatabase.withClient(url: url) { postgres, _ in
                var hashes: [String] = []
                for try await hash in try await postgres.query("SELECT key_hash FROM api_keys", logger: Logger(label: "test"))
                    .decode(String.self) { hashes.append(hash) }
                return hashes
            }
            #expect(stored == [SecureToken.hash(key.key)])
            // Another admin sees none of it; the root's list is its own.
            let (_, rootList) = try await helper.send(client, .get, "/admin/v1/api-keys", token: root)
            #expect(try JSONDecoder.iso8601.decode(APIKeyList.self, from: Data(buffer: rootList)).keys.isEmpty)
            #expect(try await helper.send(client, .delete, "/admin/v1/api-keys/\(key.id)", token: root).0 == .notFound)

            // The response service learns whose it is, with the roles of now.
            let (status, identity) = try await verify(client, key: key.key)
            #expect(status == .ok)
            #expect(identity?.email == "researcher@studystack.test")
            #expect(identity?.role(on: "SLEEPWELL") == .viewer)
            #expect(try await helper.send(client, .delete, "/admin/v1/studies/SLEEPWELL/roles/\(adminId)", token: root).0 == .noContent)
            #expect(try await verify(client, key: key.key).1?.role(on: "SLEEPWELL") == nil, "a role taken away holds at once")
            // Only the response service may ask, and a key unknown is not found.
            #expect(try await verify(client, key: key.key, as: .registration).0 == .forbidden)
            #expect(try await verify(client, key: "ssk_not-a-key").0 == .notFound)

            // Revoked: refused from then on; revoking again changes nothing.
            #expect(try await helper.send(client, .delete, "/admin/v1/api-keys/\(key.id)", token: token).0 == .noContent)
            #expect(try await verify(client, key: key.key).0 == .notFound)
            #expect(try await helper.send(client, .delete, "/admin/v1/api-keys/\(key.id)", token: token).0 == .noContent)
            let (_, afterBody) = try await helper.send(client, .get, "/admin/v1/api-keys", token: token)
            #expect(try JSONDecoder.iso8601.decode(APIKeyList.self, from: Data(buffer: afterBody)).keys.first?.revokedAt != nil)

            // Made, used (once a minute at most, however often), revoked: each in the audit log.
            #expect(try await auditActions(url) == ["api_keys.created", "api_keys.used", "api_keys.revoked"])
        }
    }

    @Test func anExpiredKeyIsRefusedAndBadRequestsChangeNothing() async throws {
        try await helper.withService { client, root, url in
            for body in [#"{"name": ""}"#, #"{"name": "x", "expiresInDays": 0}"#, #"{"name": "x", "expiresInDays": 366}"#,
                         #"{"name": "two\nlines"}"#, "not json",
                         #"{"name": "\u0085\#(String(repeating: "k", count: 100))"}"#,
                         // 50 letters with two combining marks each: 150 characters as PostgreSQL counts them.
                         #"{"name": "\#(String(repeating: "a\u{301}\u{302}", count: 50))"}"#] {
                let (status, _) = try await helper.send(client, .post, "/admin/v1/api-keys", token: root, body: body)
                #expect(status == .unprocessableContent || status == .badRequest, "\(body)")
            }
            #expect(try await auditActions(url).isEmpty)
            #expect(try await helper.send(client, .post, "/admin/v1/api-keys", token: "nobody", body: #"{"name": "x"}"#).0 == .unauthorized)

            let (_, body) = try await helper.send(client, .post, "/admin/v1/api-keys", token: root, body: #"{"name": "old"}"#)
            let key = try JSONDecoder.iso8601.decode(APIKeyCreated.self, from: Data(buffer: body))
            #expect(abs(key.expiresAt.timeIntervalSinceNow - 90 * 86_400) < 120, "90 days unless asked")
            _ = try await TestDatabase.withClient(url: url) { postgres, _ in
                try await postgres.query("UPDATE api_keys SET expires_at = now() - interval '1 second'", logger: Logger(label: "test"))
            }
            #expect(try await verify(client, key: key.key).0 == .notFound)

            // At most twenty live keys an admin; the expired one does not count.
            for index in 1...APIKeyStoreLimit.live {
                let (status, _) = try await helper.send(client, .post, "/admin/v1/api-keys", token: root, body: #"{"name": "k\#(index)"}"#)
                #expect(status == .created)
            }
            let (refused, refusedBody) = try await helper.send(client, .post, "/admin/v1/api-keys", token: root, body: #"{"name": "one more"}"#)
            #expect(refused == .conflict)
            #expect(String(buffer: refusedBody).contains("revoke one you no longer use"))
        }
    }
}

enum APIKeyStoreLimit {
    static let live = 20
}
