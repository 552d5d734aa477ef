import Foundation
import HummingbirdTesting
import Logging
import NIOCore
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// A real study-metadata service with app DEMOAPP and the example study published under each of
/// `studies`: what the registration service asks about the studies participants name.
enum StudyMetadataFixture {
    /// Admin bearer tokens of study-metadata's, for the other services' admin APIs.
    struct Team: Sendable {
        /// The super-admin.
        var root: String
        /// A viewer on the first study.
        var viewer: String
        /// An admin with no role on any study.
        var stranger: String
        /// Where study-metadata listens, for a test that changes a study while it runs.
        var url: String
    }

    static func run(studies: [String], _ body: @escaping @Sendable (_ url: String) async throws -> Void) async throws {
        try await run(studies: studies, team: false) { url, _ in try await body(url) }
    }

    /// The same, with a team of admins when `team` is true; `document` makes each study's document
    /// from its id (the example study by default).
    static func run(
        studies: [String], team: Bool, document: @escaping @Sendable (String) throws -> String = { try ExampleStudy().document(studyId: $0) },
        _ body: @escaping @Sendable (_ url: String, Team?) async throws -> Void
    ) async throws {
        let drafts = MetadataAdmin()
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"]
                    .merging(try await SharedResponsePeer.overrides()) { $1 })
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "metadata-fixture"))
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                let root = try await drafts.login(client, "root@studystack.test", "Sup3r-Secret!")
                #expect(try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
                for studyId in studies {
                    let document = try document(studyId)
                    let (saved, savedBody) = try await drafts.send(client, .put, "/admin/v1/studies/\(studyId)/draft", token: root, body: document)
                    try #require(saved == .created, "\(String(buffer: savedBody))")
                    let (published, publishedBody) = try await drafts.send(client, .post, "/admin/v1/studies/\(studyId)/publish", token: root)
                    try #require(published == .ok, "\(String(buffer: publishedBody))")
                }
                var members: Team?
                if team, let first = studies.first {
                    let (_, viewer) = try await drafts.makeAdmin(client, root: root, email: "viewer@team.test")
                    try #require(try await drafts.send(
                        client, .put, "/admin/v1/studies/\(first)/team", token: root,
                        body: #"{"email":"viewer@team.test","role":"viewer"}"#).0 == .ok)
                    let (_, stranger) = try await drafts.makeAdmin(client, root: root, email: "stranger@team.test")
                    members = Team(root: root, viewer: viewer, stranger: stranger, url: "http://127.0.0.1:\(client.port!)")
                }
                try await body("http://127.0.0.1:\(client.port!)", members)
            }
        }
    }
}
