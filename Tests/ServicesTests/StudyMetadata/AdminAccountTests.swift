import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// study-metadata's admin accounts: bootstrap, login, tokens, lockout, invitations, roles, audit.
@Suite struct AdminAccountTests {

    struct Session: Decodable {
        struct Me: Decodable {
            var id: UUID
            var email: String
            var role: String
            var studyRoles: [String: String]
        }

        var token: String
        var expiresAt: Date
        var admin: Me
    }

    struct Invited: Decodable {
        struct Invitation: Decodable { var token: String }
        var id: UUID
        var invitation: Invitation
    }

    struct Events: Decodable {
        struct Event: Decodable {
            var actor: String
            var action: String
            var studyId: String?
        }

        var events: [Event]
    }

    func withService(_ body: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": MetadataAdmin.adminEmail, "studystack.adminPassword": MetadataAdmin.adminPassword]
                    .merging(try await SharedResponsePeer.overrides()) { $1 })
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "admin-test"))
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await body(client, url)
            }
        }
    }

    func json(_ value: [String: String]) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONEncoder().encode(value))
    }

    func login(_ client: some TestClientProtocol, _ email: String, _ password: String) async throws -> (HTTPResponse.Status, ByteBuffer) {
        try await client.execute(uri: "/admin/v1/login", method: .post, body: json(["email": email, "password": password])) {
            ($0.status, $0.body)
        }
    }

    func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    @Test(.needsCluster) func theBootstrapAdminLogsInWithAHashedExpiringToken() async throws {
        try await withService { client, url in
            let (status, body) = try await login(client, MetadataAdmin.adminEmail, MetadataAdmin.adminPassword)
            #expect(status == .ok)
            let session = try JSONDecoder.iso.decode(Session.self, from: Data(buffer: body))
            #expect(session.admin.role == "super_admin")
            #expect(session.token.count == 43)
            #expect(session.expiresAt > Date().addingTimeInterval(11 * 3600))

            try await client.execute(uri: "/admin/v1/me", method: .get, headers: bearer(session.token)) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body).contains(MetadataAdmin.adminEmail))
            }
            // Only the SHA-256 of the token is stored.
            let stored = try await TestDatabase.withClient(url: url) { client, logger in
                let rows = try await client.query("SELECT token_hash FROM admin_sessions", logger: logger)
                var hashes: [String] = []
                for try await hash in rows.decode(String.self) { hashes.append(hash) }
                return hashes
            }
            #expect(stored == [SecureToken.hash(session.token)])
            #expect(!stored.contains(session.token))

            // An expired session is refused.
            _ = try await TestDatabase.withClient(url: url) { client, logger in
                try await client.query("UPDATE admin_sessions SET expires_at = now() - interval '1 second'", logger: logger)
            }
            try await client.execute(uri: "/admin/v1/me", method: .get, headers: bearer(session.token)) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test(.needsCluster) func wrongPasswordsAndUnknownAccountsLookTheSameAndFiveLockTheAccount() async throws {
        try await withService { client, _ in
            let (unknown, unknownBody) = try await login(client, "nobody@studystack.test", MetadataAdmin.adminPassword)
            let (wrong, wrongBody) = try await login(client, MetadataAdmin.adminEmail, "Wrong-pass1")
            #expect(unknown == .unauthorized)
            #expect(wrong == .unauthorized)
            #expect(String(buffer: unknownBody) == String(buffer: wrongBody))
            for _ in 0..<4 { _ = try await login(client, MetadataAdmin.adminEmail, "Wrong-pass1") }
            let (locked, lockedBody) = try await login(client, MetadataAdmin.adminEmail, MetadataAdmin.adminPassword)
            #expect(locked == .forbidden)
            #expect(String(buffer: lockedBody).contains("\"code\":\"locked\""))
        }
    }

    @Test(.needsCluster) func logoutRevokesTheToken() async throws {
        try await withService { client, _ in
            let (_, body) = try await login(client, MetadataAdmin.adminEmail, MetadataAdmin.adminPassword)
            let token = try JSONDecoder.iso.decode(Session.self, from: Data(buffer: body)).token
            try await client.execute(uri: "/admin/v1/logout", method: .post, headers: bearer(token)) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/admin/v1/me", method: .get, headers: bearer(token)) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/admin/v1/me", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test(.needsCluster) func invitationsRolesAndAudit() async throws {
        try await withService { client, url in
            // Roles are granted on studies that exist.
            try await TestDatabase.withClient(url: url) { postgres, logger in
                try await postgres.query(
                    "INSERT INTO apps (app_id, org_id, definition) VALUES ('APP1', 'ORG1', '{}')", logger: logger)
                try await postgres.query(
                    """
                    INSERT INTO studies (study_id, app_id, draft, draft_updated_by, created_by)
                    VALUES ('STUDY1', 'APP1', '{}', 'test', 'test')
                    """, logger: logger)
            }
            let (_, rootBody) = try await login(client, MetadataAdmin.adminEmail, MetadataAdmin.adminPassword)
            let root = try JSONDecoder.iso.decode(Session.self, from: Data(buffer: rootBody)).token

            // Invite two admins; each invitation token is shown once.
            func invite(_ email: String) async throws -> Invited {
                try await client.execute(
                    uri: "/admin/v1/admins", method: .post, headers: bearer(root), body: json(["email": email])
                ) { response in
                    #expect(response.status == .created)
                    return try JSONDecoder().decode(Invited.self, from: Data(buffer: response.body))
                }
            }
            let editor = try await invite("editor@studystack.test")
            let lead = try await invite("lead@studystack.test")
            try await client.execute(
                uri: "/admin/v1/admins", method: .post, headers: bearer(root), body: json(["email": "editor@studystack.test"])
            ) { #expect($0.status == .conflict) }

            // Accepting needs a policy-conforming password, and works once.
            try await client.execute(
                uri: "/admin/v1/invitations/accept", method: .post,
                body: json(["token": editor.invitation.token, "password": "short"])
            ) { #expect($0.status == .badRequest) }
            for (invited, password) in [(editor, "Edit0r-pass"), (lead, "L3ad-pass!")] {
                try await client.execute(
                    uri: "/admin/v1/invitations/accept", method: .post,
                    body: json(["token": invited.invitation.token, "password": password])
                ) { #expect($0.status == .ok) }
            }
            try await client.execute(
                uri: "/admin/v1/invitations/accept", method: .post,
                body: json(["token": editor.invitation.token, "password": "Edit0r-pass2"])
            ) { #expect($0.status == .gone) }

            // Roles: the super-admin makes one a study admin and the other an editor of STUDY1.
            for (admin, role) in [(lead, "study_admin"), (editor, "editor")] {
                try await client.execute(
                    uri: "/admin/v1/studies/STUDY1/roles/\(admin.id)", method: .put, headers: bearer(root),
                    body: json(["role": role])
                ) { #expect($0.status == .ok) }
            }
            let (_, editorBody) = try await login(client, "editor@studystack.test", "Edit0r-pass")
            let editorSession = try JSONDecoder.iso.decode(Session.self, from: Data(buffer: editorBody))
            #expect(editorSession.admin.studyRoles == ["STUDY1": "editor"])
            let (_, leadBody) = try await login(client, "lead@studystack.test", "L3ad-pass!")
            let leadToken = try JSONDecoder.iso.decode(Session.self, from: Data(buffer: leadBody)).token

            // An editor may not grant roles, invite admins or read the audit log.
            try await client.execute(
                uri: "/admin/v1/studies/STUDY1/roles/\(lead.id)", method: .put, headers: bearer(editorSession.token),
                body: json(["role": "viewer"])
            ) { response in
                #expect(response.status == .forbidden)
                #expect(String(buffer: response.body).contains("study_admin"))
            }
            try await client.execute(
                uri: "/admin/v1/admins", method: .post, headers: bearer(editorSession.token), body: json(["email": "x@y.test"])
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/admin/v1/audit", method: .get, headers: bearer(editorSession.token)) {
                #expect($0.status == .forbidden)
            }
            // The study admin may grant on their study, not on another.
            try await client.execute(
                uri: "/admin/v1/studies/STUDY1/roles/\(editor.id)", method: .put, headers: bearer(leadToken),
                body: json(["role": "viewer"])
            ) { #expect($0.status == .ok) }
            try await client.execute(
                uri: "/admin/v1/studies/STUDY2/roles/\(editor.id)", method: .put, headers: bearer(leadToken),
                body: json(["role": "viewer"])
            ) { #expect($0.status == .forbidden) }

            // Every step is in the audit log.
            let events = try await client.execute(uri: "/admin/v1/audit?limit=100", method: .get, headers: bearer(root)) {
                try JSONDecoder().decode(Events.self, from: Data(buffer: $0.body)).events
            }
            let actions = events.map(\.action)
            for expected in ["admin.bootstrapped", "admin.login", "admin.invited", "admin.invitation_accepted", "study.role_granted"] {
                #expect(actions.contains(expected), "\(expected) missing")
            }
            #expect(events.contains { $0.action == "study.role_granted" && $0.actor == "lead@studystack.test" && $0.studyId == "STUDY1" })
            let forStudy = try await client.execute(uri: "/admin/v1/audit?studyId=STUDY1", method: .get, headers: bearer(root)) {
                try JSONDecoder().decode(Events.self, from: Data(buffer: $0.body)).events
            }
            #expect(!forStudy.isEmpty && forStudy.allSatisfy { $0.studyId == "STUDY1" })
            // Out of range is refused, not quietly clamped (found by fuzzing).
            for query in ["limit=0", "limit=1001", "limit=ten"] {
                try await client.execute(uri: "/admin/v1/audit?\(query)", method: .get, headers: bearer(root)) {
                    #expect($0.status == .badRequest, "\(query)")
                }
            }
            try await client.execute(uri: "/admin/v1/outbox?undelivered=maybe", method: .get, headers: bearer(root)) {
                #expect($0.status == .badRequest)
            }
        }
    }

    @Test func aWeakBootstrapPasswordStopsTheServiceWithTheSettingNamed() throws {
        let reader = TestConfiguration.reader(
            for: .studyMetadata, databaseURL: "postgres://x@127.0.0.1:1/x",
            overrides: ["studystack.adminEmail": MetadataAdmin.adminEmail, "studystack.adminPassword": "password"])
        let error = #expect(throws: ConfigurationError.self) {
            try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "test"))
        }
        #expect(error?.description.hasPrefix("configuration error: STUDYSTACK_ADMIN_PASSWORD") == true)
    }
}

extension JSONDecoder {
    /// Decodes the ISO 8601 dates Hummingbird's encoder writes.
    static var iso: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
