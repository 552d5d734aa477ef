import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StudyMetadataCore
import StudyModels
import Testing
import TestSupport

/// Images and PDFs uploaded for a study: typed by their content, bounded, audited, and served to
/// the apps at a URL that never changes.
@Suite struct StudyFileTests {
    let helper = MetadataAdmin()

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 40)
    static let pdf = Array("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n".utf8)

    func upload(_ client: some TestClientProtocol, _ bytes: [UInt8], name: String, token: String, study: String = "SLEEPWELL")
        async throws -> (HTTPResponse.Status, [String: Any])
    {
        let query = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        return try await client.execute(
            uri: "/admin/v1/studies/\(study)/files?name=\(query)", method: .post, headers: [.authorization: "Bearer \(token)"],
            body: ByteBuffer(bytes: bytes)
        ) { ($0.status, (try? JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any]) ?? [:]) }
    }

    @Test(.needsCluster) func filesAreTypedByTheirContentBoundedAndServedForGood() async throws {
        try await helper.withService { client, root, url in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)

            let (created, image) = try await upload(client, Self.png, name: "../../etc/ph\"oto\n.PNG", token: root)
            #expect(created == .created)
            #expect(image["contentType"] as? String == "image/png")
            #expect(image["name"] as? String == "photo.PNG")
            #expect(image["bytes"] as? Int == Self.png.count)
            let link = try #require(image["url"] as? String)
            let path = try #require(URL(string: link)?.path)
            #expect(path.hasPrefix("/StudyMetaData/files/"))
            let (_, document) = try await upload(client, Self.pdf, name: "consent-faq.txt", token: root)
            #expect(document["contentType"] as? String == "application/pdf", "the content decides, not the name")

            // Refused, nothing stored: not an image or PDF (an SVG can carry script), too big, an
            // unknown study, a viewer.
            let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
            #expect(try await upload(client, svg, name: "x.png", token: root).0 == .unsupportedMediaType)
            #expect(try await upload(client, [], name: "empty.png", token: root).0 == .unsupportedMediaType)
            let big = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 2 * 1024 * 1024)
            let (tooBig, refusal) = try await upload(client, big, name: "big.png", token: root)
            #expect(tooBig == .contentTooLarge)
            #expect(String(describing: refusal).contains("at most 2 MB"))
            #expect(try await upload(client, Self.png, name: "a.png", token: root, study: "NOSTUDY").0 == .notFound)
            let (viewerId, viewer) = try await helper.makeAdmin(client, root: root, email: "viewer@studystack.test")
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(viewerId)", token: root, body: #"{"role":"viewer"}"#)
            #expect(try await upload(client, Self.png, name: "a.png", token: viewer).0 == .forbidden)
            let (listed, listBody) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/files", token: viewer)
            #expect(listed == .ok)
            let files = try JSONDecoder.iso8601.decode(StudyFileList.self, from: Data(buffer: listBody)).files
            try #require(files.count == 2)
            #expect(Set(files.map(\.contentType)) == ["image/png", "application/pdf"])

            // The apps fetch it without a credential: its own type, never sniffed, no script.
            let served = try await client.execute(uri: path, method: .get) { $0 }
            #expect(served.status == .ok)
            #expect(Array(buffer: served.body) == Self.png)
            #expect(served.headers[.contentType] == "image/png")
            #expect(served.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(served.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
            #expect(served.headers[.contentDisposition] == "inline; filename=\"photo.PNG\"")
            let etag = try #require(served.headers[.eTag])
            #expect(try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag]) { $0.status } == .notModified)
            for unknown in ["/StudyMetaData/files/\(UUID().uuidString)", "/StudyMetaData/files/not-an-id"] {
                #expect(try await client.execute(uri: unknown, method: .get) { $0.status } == .notFound)
            }

            // Each upload is audited; a study keeps at most 200 files.
            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    "SELECT count(*)::int FROM audit_events WHERE action = 'study.file_uploaded'", logger: logger)
                #expect(try await rows.decode(Int.self).collect() == [2])
                try await postgres.query(
                    """
                    INSERT INTO study_files (file_id, study_id, name, content_type, bytes, sha256, content, uploaded_by)
                    SELECT gen_random_uuid(), 'SLEEPWELL', 'f', 'image/png', 1, 'x', '\\x00'::bytea, 'test' FROM generate_series(1, 198)
                    """, logger: logger)
            }
            let (full, fullBody) = try await upload(client, Self.png, name: "one-more.png", token: root)
            #expect(full == .conflict)
            #expect(String(describing: fullBody).contains("200 files"))
        }
    }

    @Test func theContentDecidesTheKind() {
        #expect(UploadedFileKind.of([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(UploadedFileKind.of(Array("GIF89a".utf8)) == .gif)
        #expect(UploadedFileKind.of(Array("GIF90a".utf8)) == nil)
        #expect(UploadedFileKind.of(Array("%PDF".utf8)) == nil)
        #expect(UploadedFileKind.displayName("C:\\\\Users\\\\x\\\\scan.pdf") == "scan.pdf")
        #expect(UploadedFileKind.displayName("\u{202E}gnp.exe") == "gnp.exe")
        #expect(UploadedFileKind.displayName("/") == "file")
        #expect(UploadedFileKind.displayName(String(repeating: "a", count: 300)).count == 100)
    }
}
