import Crypto
import Foundation
import HTTPTypes
import JSONText
import Logging
import NIOCore
import ResponseCore
import SageAssessments
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Bridge's upload handshake as Sage's clients speak it: a session opened with the app token,
/// the bytes put to its URL with their Content-MD5, the session completed into an archive.
@Suite(.needsCluster) struct SageUploadTests {
    let sage = SageArchiveFixture()

    struct Reply {
        var status: HTTPResponse.Status
        var body: JSONValue
    }

    func send(
        _ h: ResponseHarness, _ method: HTTPRequest.Method, _ uri: String, appToken: String? = nil, json: String? = nil,
        bytes: [UInt8]? = nil, headers extra: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = extra
        if let appToken { headers[.authorization] = "Bearer \(appToken)" }
        if json != nil { headers[.contentType] = "application/json" }
        let body = json.map { ByteBuffer(string: $0) } ?? bytes.map { ByteBuffer(bytes: $0) }
        return try await h.client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            Reply(status: response.status, body: (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))) ?? .null)
        }
    }

    static func md5(_ bytes: [UInt8]) -> String { Data(Insecure.MD5.hash(data: bytes)).base64EncodedString() }

    static func request(_ bytes: [UInt8], md5: String? = nil) -> String {
        #"{"name": "sleep.zip", "contentLength": \#(bytes.count), "contentMd5": "\#(md5 ?? Self.md5(bytes))", "contentType": "application/zip", "encrypted": false, "zipped": true, "metadata": {"instanceGuid": "abc", "startedOn": "2026-11-20T08:00:00.000-05:00"}}"#
    }

    /// The session's URL as a path this test's client can ask for.
    static func path(_ url: String) throws -> String {
        let components = try #require(URLComponents(string: url))
        #expect(components.scheme == "http")
        return components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? "")
    }

    static func putHeaders(_ bytes: [UInt8], md5: String? = nil, type: String = "application/zip") -> HTTPFields {
        var headers: HTTPFields = [.contentType: type]
        headers[HTTPField.Name("Content-MD5")!] = md5 ?? Self.md5(bytes)
        return headers
    }

    /// Opening an upload is a handful of fields and a metadata object: read from at most 64 KiB,
    /// its metadata built within a budget (docs/security.md, Budgets).
    @Test func anUploadRequestIsReadWithinItsBudget() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let objects = "[" + Array(repeating: #"{"a":1}"#, count: 3_000).joined(separator: ",") + "]"
            let large = Self.request(archive).replacingOccurrences(of: #""instanceGuid": "abc""#, with: #""padding": "\#(String(repeating: "x", count: 70_000))""#)
            let tooLarge = try await send(h, .post, "/v3/uploads", appToken: appToken, json: large)
            #expect(tooLarge.status == .contentTooLarge, "\(tooLarge.body)")
            let deep = Self.request(archive).replacingOccurrences(of: #""instanceGuid": "abc""#, with: #""events": \#(objects)"#)
            let tooMany = try await send(h, .post, "/v3/uploads", appToken: appToken, json: deep)
            #expect(tooMany.status == .badRequest, "\(tooMany.body)")
            #expect(tooMany.body.serialized().contains("more values than one document may hold (4096)"), "\(tooMany.body)")
            #expect(try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive)).status == .created)
        }
    }

    @Test func anArchiveUploadedThroughTheHandshakeIsStoredOnce() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let opened = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive))
            #expect(opened.status == .created, "\(opened.body)")
            #expect(opened.body["type"] == .string("UploadSession"))
            let id = try #require(opened.body["id"]?.string)
            let url = try Self.path(try #require(opened.body["url"]?.string))
            #expect(opened.body["expires"]?.string != nil)

            // Nothing put yet: nothing to complete.
            #expect(try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken).status == .conflict)
            let put = try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive))
            #expect(put.status == .ok, "\(put.body)")
            let completed = try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken)
            #expect(completed.status == .ok)
            #expect(completed.body["type"] == .string("UploadValidationStatus"))
            #expect(completed.body["status"] == .string("succeeded"))
            let archiveId = try #require(completed.body["archiveId"]?.string)
            // Completed again (a client retrying): the same archive, nothing more stored.
            let again = try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken)
            #expect(again.body["archiveId"]?.string == archiveId)
            // Put again (a client that did not hear the first 200): taken, as S3 takes it, and
            // nothing more is stored.
            #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .ok)
            #expect(try await sage.count(h, "sage_archives") == 1)
            #expect(try await sage.count(h, "responses") == 1)
            #expect(try await sage.count(h, "sage_uploads WHERE content IS NOT NULL") == 0)
        }
    }

    /// Sage's clients send the session token in `Bridge-Session`, not as a Bearer token; a call
    /// with neither is 401.
    @Test func theTokenMayComeInTheBridgeSessionHeader() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let session: HTTPFields = [HTTPField.Name("Bridge-Session")!: appToken]
            let opened = try await send(h, .post, "/v3/uploads", json: Self.request(archive), headers: session)
            #expect(opened.status == .created, "\(opened.body)")
            let id = try #require(opened.body["id"]?.string)
            let url = try Self.path(try #require(opened.body["url"]?.string))
            #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .ok)
            #expect(try await send(h, .post, "/v3/uploads/\(id)/complete").status == .unauthorized)
            let completed = try await send(h, .post, "/v3/uploads/\(id)/complete", headers: session)
            #expect(completed.body["status"] == .string("succeeded"), "\(completed.body)")
            #expect(try await sage.count(h, "sage_archives") == 1)
            let direct = try await sage.post(h, SageArchiveFixture.archive(), appToken: nil, headers: session)
            #expect(direct.0 == .created, "\(direct.1)")
        }
    }

    /// Archives as Sage's iOS and Android clients build them, uploaded as their upload managers
    /// do (docs/sage.md, What Sage's clients do): the token in `Bridge-Session`, the PUT sent
    /// again (a retry after a lost answer), `complete` sent again. Each is stored once, and
    /// nothing is refused.
    @Test func archivesAsTheRealClientsBuildThemAreStoredOnce() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h, activity: SageClientRun.assessmentIdentifier, assessment: SageClientRun.assessment)
            let appToken = try await sage.enroll(h)
            let session: HTTPFields = [HTTPField.Name("Bridge-Session")!: appToken]
            let archives = SageClientRun.Platform.allCases.map { SageClientRun.archive($0) }
            try #require(archives.count == 2)
            var stored: Set<String> = []
            for archive in archives {
                let opened = try await send(h, .post, "/v3/uploads", json: Self.request(archive), headers: session)
                #expect(opened.status == .created, "\(opened.body)")
                let id = try #require(opened.body["id"]?.string)
                let url = try Self.path(try #require(opened.body["url"]?.string))
                #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .ok)
                #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .ok)
                let first = try await send(h, .post, "/v3/uploads/\(id)/complete", headers: session)
                #expect(first.body["status"] == .string("succeeded"), "\(first.body)")
                let again = try await send(h, .post, "/v3/uploads/\(id)/complete", headers: session)
                #expect(again.body["archiveId"] == first.body["archiveId"])
                #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .ok)
                stored.insert(try #require(first.body["archiveId"]?.string))
            }
            #expect(stored.count == 2)
            #expect(try await sage.count(h, "sage_archives") == 2)
            #expect(try await sage.count(h, "sage_refused_archives") == 0)
            #expect(try await sage.count(h, "responses") == 2)
        }
    }

    @Test func theHandshakeRefusesWhatIsNotTheUploadAskedFor() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let stranger = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()

            // Bad requests open nothing.
            let badRequests = [
                Self.request(archive, md5: "not base64"),
                Self.request(archive, md5: Data([1, 2, 3]).base64EncodedString()),
                Self.request(archive).replacingOccurrences(of: "\"contentLength\": \(archive.count)", with: "\"contentLength\": 0"),
                Self.request(archive).replacingOccurrences(of: "\"contentLength\": \(archive.count)", with: "\"contentLength\": 999999999999"),
            ]
            #expect(badRequests.count == 4)
            for request in badRequests {
                #expect(try await send(h, .post, "/v3/uploads", appToken: appToken, json: request).status == .unprocessableContent, "\(request)")
            }
            #expect(try await send(h, .post, "/v3/uploads", appToken: "nobody", json: Self.request(archive)).status == .unauthorized)
            #expect(try await sage.count(h, "sage_uploads") == 0)

            let opened = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive))
            let id = try #require(opened.body["id"]?.string)
            let url = try Self.path(try #require(opened.body["url"]?.string))
            let forged = url.replacingOccurrences(of: "secret=", with: "secret=x")
            // As S3 answers a pre-signed URL that is not valid: 403, which Sage's iOS client retries
            // with a new session (a 404 it would take as the end of the archive).
            #expect(try await send(h, .put, forged, bytes: archive, headers: Self.putHeaders(archive)).status == .forbidden)
            #expect(try await send(h, .put, "/sage/v1/uploads/\(id)", bytes: archive, headers: Self.putHeaders(archive)).status == .forbidden)
            #expect(try await send(h, .put, "/sage/v1/uploads/\(UUID())?secret=x", bytes: archive, headers: Self.putHeaders(archive)).status == .forbidden)
            var damaged = archive
            damaged[damaged.count / 2] ^= 0xFF
            #expect(try await send(h, .put, url, bytes: damaged, headers: Self.putHeaders(archive)).status == .badRequest)
            #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive, md5: Self.md5([1]))).status == .badRequest)
            #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive, type: "text/plain")).status == .badRequest)
            #expect(try await send(h, .put, url, bytes: archive + [0], headers: Self.putHeaders(archive + [0])).status == .badRequest)
            // Another participant cannot complete (or learn of) this session.
            #expect(try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: stranger).status == .notFound)
            #expect(try await sage.count(h, "sage_uploads WHERE content IS NOT NULL") == 0)

            // Bytes that are not an archive: the call succeeds, the validation fails, nothing is stored.
            let junk = Array("not an archive".utf8)
            let junkSession = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(junk))
            let junkURL = try Self.path(try #require(junkSession.body["url"]?.string))
            #expect(try await send(h, .put, junkURL, bytes: junk, headers: Self.putHeaders(junk)).status == .ok)
            let failed = try await send(h, .post, "/v3/uploads/\(try #require(junkSession.body["id"]?.string))/complete", appToken: appToken)
            #expect(failed.status == .ok)
            #expect(failed.body["status"] == .string("validation_failed"))
            #expect(failed.body["messageList"]?.array?.first?.string?.contains("neither a ZIP") == true, "\(failed.body)")
            #expect(try await sage.count(h, "sage_archives") == 0)

            // Open sessions are bounded per participant, for a week's backlog opened at once (the
            // refused one is closed).
            #expect(try await sage.count(h, "sage_uploads WHERE closed = 'refused'") == 1)
            #expect(SageUploadStore.maxOpenPerParticipant == 500)
            for _ in 0..<499 {
                let backlog = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive))
                guard backlog.status == .created else {
                    Issue.record("a session of the backlog was refused: \(backlog.status) \(backlog.body)")
                    return
                }
            }
            #expect(try await sage.count(h, "sage_uploads WHERE archive_id IS NULL AND closed IS NULL") == 500)
            #expect(try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive)).status == .tooManyRequests)
        }
    }

    /// A session's URL takes bytes for a day, as Bridge's: after that the PUT is 403 (as S3's) and
    /// the completion 410, and nothing is stored.
    @Test func anExpiredSessionTakesNothing() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let opened = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive))
            let id = try #require(opened.body["id"]?.string)
            let url = try Self.path(try #require(opened.body["url"]?.string))
            let expires = try #require(opened.body["expires"]?.string.flatMap { ISO8601DateFormatter().date(from: $0) })
            #expect(expires.timeIntervalSinceNow > 86_000 && expires.timeIntervalSinceNow <= 86_400)
            try await h.sql("UPDATE sage_uploads SET expires_at = now() - interval '1 second'")
            #expect(try await send(h, .put, url, bytes: archive, headers: Self.putHeaders(archive)).status == .forbidden)
            #expect(try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken).status == .gone)
            #expect(try await sage.count(h, "sage_uploads WHERE content IS NOT NULL") == 0)
            #expect(try await sage.count(h, "sage_archives") == 0)
        }
    }

    /// The URL is checked before the body is read, and the session may close while the body is
    /// on its way (an 8 MiB body over a phone's link takes a while): what arrives then is not kept.
    @Test func bytesThatArriveAfterTheSessionClosedAreNotKept() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let opened = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(archive))
            let address = try #require(opened.body["url"]?.string)
            let url = try #require(URLComponents(string: address))
            let id = try #require(url.path.split(separator: "/").last.flatMap { UUID(uuidString: String($0)) })
            let secret = try #require(url.queryItems?.first { $0.name == "secret" }?.value)
            let uploads = SageUploadStore(client: h.postgres, logger: Logger(label: "test"))

            #expect(try await uploads.lookup(id: id, secret: "not-the-secret") == .closed(.unknown))
            guard case .awaiting(let session) = try await uploads.lookup(id: id, secret: secret) else {
                Issue.record("the session is not awaiting its bytes")
                return
            }
            #expect(session.length == archive.count)
            #expect(session.refusal(contentMD5: Self.md5(archive), contentType: "application/zip") == nil)
            #expect(session.refusal(contentMD5: Self.md5([1]), contentType: "application/zip") != nil)

            try await h.sql("UPDATE sage_uploads SET expires_at = now() - interval '1 second'")
            #expect(try await uploads.put(archive, into: session) == .expired)
            try await h.sql("UPDATE sage_uploads SET expires_at = now() + interval '1 hour', archive_id = gen_random_uuid()")
            #expect(try await uploads.put(archive, into: session) == .completed)
            #expect(try await sage.count(h, "sage_uploads WHERE content IS NOT NULL") == 0)
        }
    }

    /// The service's own completion of uploads, as the response service runs it, with no grace
    /// (the service waits five minutes for the client's own `complete`).
    static func completion(_ h: ResponseHarness, grace: Duration = .zero) throws -> SageUploadCompletion {
        let logger = Logger(label: "test")
        let audit = AuditLog(client: h.postgres, logger: logger)
        let intake = SageArchiveIntake(
            responses: ResponseStore(client: h.postgres, audit: audit, logger: logger),
            archives: SageArchiveStore(
                client: h.postgres, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!, audit: audit,
                stored: WakeSignal(), logger: logger),
            refusals: SageRefusalStore(client: h.postgres, logger: logger), schemas: try SageSchemaSet.bundled(),
            maxArchiveBytes: 8 << 20)
        return SageUploadCompletion(intake: intake, uploads: SageUploadStore(client: h.postgres, logger: logger), grace: grace, logger: logger)
    }

    /// Opens an upload of `bytes` and puts them, as a client does before it completes; answers
    /// the session's id.
    func openAndPut(_ h: ResponseHarness, _ bytes: [UInt8], appToken: String) async throws -> String {
        let opened = try await send(h, .post, "/v3/uploads", appToken: appToken, json: Self.request(bytes))
        #expect(opened.status == .created, "\(opened.body)")
        let put = try await send(h, .put, try Self.path(try #require(opened.body["url"]?.string)), bytes: bytes, headers: Self.putHeaders(bytes))
        #expect(put.status == .ok, "\(put.body)")
        return try #require(opened.body["id"]?.string)
    }

    /// Sage's clients delete their copy once its bytes are put and ignore what `complete`
    /// answers: bytes whose `complete` never came are completed by the service, through the same
    /// intake. Stored once (the client's late `complete` finds the same archive); refused for
    /// their content and kept with why; dropped only when their participant no longer holds the
    /// token; and an expired session holding bytes is not deleted before they are stored.
    @Test func bytesPutButNeverCompletedAreCompletedByTheService() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let id = try await openAndPut(h, archive, appToken: appToken)

            // Within the grace the client has to complete it, nothing is taken.
            #expect(try await Self.completion(h, grace: .seconds(300)).round() == 0)
            // The session expires meanwhile; a new one opened does not take its bytes with it.
            try await h.sql("UPDATE sage_uploads SET expires_at = now() - interval '1 second'")
            let walk = SageRefusalTests.walkArchive()
            let refusedId = try await openAndPut(h, walk, appToken: appToken)
            #expect(try await sage.count(h, "sage_uploads WHERE content IS NOT NULL") == 2)

            let completion = try Self.completion(h)
            #expect(try await completion.round() == 2)
            #expect(try await sage.count(h, "sage_archives") == 1)
            #expect(try await sage.count(h, "responses") == 1)
            #expect(try await sage.count(h, "sage_refused_archives WHERE door = 'upload' AND reason LIKE '%no published activity walk%'") == 1)
            #expect(try await sage.count(h, "sage_uploads WHERE archive_id IS NOT NULL AND content IS NULL") == 1)
            #expect(try await sage.count(h, "sage_uploads WHERE closed = 'refused'") == 1)
            // Nothing is due again: each was settled once.
            #expect(try await completion.round() == 0)
            #expect(try await sage.count(h, "sage_refused_archives WHERE times_refused = 1") == 1)

            // The client's own `complete` comes late: the same archive; and the refused one's
            // answer is why.
            let late = try await send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken)
            #expect(late.body["status"] == .string("succeeded"), "\(late.body)")
            #expect(try await sage.count(h, "sage_archives") == 1)
            let refused = try await send(h, .post, "/v3/uploads/\(refusedId)/complete", appToken: appToken)
            #expect(refused.status == .unprocessableContent, "\(refused.body)")

            // A participant who withdrew before their upload was completed: nothing is stored for
            // them, and their bytes go.
            let leaving = try await sage.enroll(h)
            _ = try await openAndPut(h, SageArchiveFixture.archive(), appToken: leaving)
            let (withdrawn, _, _) = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": leaving, "delete": "false"])
            #expect(withdrawn == .ok)
            #expect(try await completion.round() == 1)
            #expect(try await sage.count(h, "sage_archives") == 1)
            #expect(try await sage.count(h, "sage_uploads WHERE closed = 'not_admitted' AND content IS NULL") == 1)
        }
    }
}
