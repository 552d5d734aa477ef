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
    static func run(studies: [String], _ body: @escaping @Sendable (_ url: String) async throws -> Void) async throws {
        let drafts = MetadataAdmin()
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"])
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "metadata-fixture"))
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                let root = try await drafts.login(client, "root@studystack.test", "Sup3r-Secret!")
                #expect(try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
                for studyId in studies {
                    let document = try ExampleStudy().document(studyId: studyId)
                    let (saved, savedBody) = try await drafts.send(client, .put, "/admin/v1/studies/\(studyId)/draft", token: root, body: document)
                    try #require(saved == .created, "\(String(buffer: savedBody))")
                    let (published, publishedBody) = try await drafts.send(client, .post, "/admin/v1/studies/\(studyId)/publish", token: root)
                    try #require(published == .ok, "\(String(buffer: publishedBody))")
                }
                try await body("http://127.0.0.1:\(client.port!)")
            }
        }
    }
}
