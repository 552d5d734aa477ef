import Foundation
import HTTPTypes
import InternalContracts
import JSONText
import NIOCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The consent records the response service's FHIR API reads (`InternalCalls.consentRecords` and
/// `consentPDF`): only records linked to a participant's app; ended by a later completed consent
/// or by leaving; the sharing choice carried over a re-consent; filtered and paged as asked; the
/// PDF as uploaded; and nothing for another caller or a malformed query.
@Suite(.needsCluster) struct ConsentRecordFeedTests {
    static func search(_ h: RegistrationHarness, _ query: ConsentRecordQuery, studyId: String = "SLEEPWELL", as caller: ServiceName = .response)
        async throws -> (HTTPResponse.Status, ConsentRecordPage?)
    {
        let path = try InternalCalls.consentRecords.path(["studyId": studyId])
        return try await raw(h, .post, path, body: try query.wireBytes(), as: caller) { status, body in
            (status, try? ConsentRecordPage.fromWire(body))
        }
    }

    static func raw<T>(
        _ h: RegistrationHarness, _ method: HTTPRequest.Method, _ path: String, body: [UInt8] = [], as caller: ServiceName = .response,
        _ read: @escaping @Sendable (HTTPResponse.Status, ByteBuffer) -> T
    ) async throws -> T {
        var headers = TestApplication.signedHeaders(caller: caller, to: .registration, method: method, path: path, body: body)
        if !body.isEmpty { headers[.contentType] = "application/json" }
        return try await h.client.execute(uri: path, method: method, headers: headers, body: body.isEmpty ? nil : ByteBuffer(bytes: body)) {
            read($0.status, $0.body)
        }
    }

    static func consent(
        _ h: RegistrationHarness, _ user: (userId: String, auth: String, refresh: String), version: String, status: String = "completed",
        sharing: String, pdf: Data?
    ) async throws {
        var consent: [String: Any] = ["version": version, "status": status]
        if let pdf { consent["pdf"] = pdf.base64EncodedString() }
        let reply = try await h.call(
            "updateEligibilityConsentStatus", body: ["studyId": "SLEEPWELL", "eligibility": true, "sharing": sharing, "consent": consent],
            auth: user.auth, userId: user.userId)
        #expect(reply.status == .ok, "\(reply.statusMessage ?? "")")
    }

    @Test func aStudysConsentsAsTheFHIRAPIReadsThem() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"]) { h in
            let sam = try await h.signUp("sam@example.org")
            let tia = try await h.signUp("tia@example.org")
            let samToken = String(repeating: "a1", count: 16)
            let tiaToken = String(repeating: "b2", count: 16)
            let samHash = SecureToken.hash(samToken)
            let tiaHash = SecureToken.hash(tiaToken)
            let first = ConsentPDF.pdf("sam signed 1.0")

            // Signed before the app reported its participant id: not there to read yet.
            try await Self.consent(h, sam, version: "1.0", sharing: "true", pdf: first)
            var (status, page) = try await Self.search(h, ConsentRecordQuery(limit: 10))
            #expect(status == .ok)
            #expect(page?.records.isEmpty == true)
            // Joined: the record follows the link.
            try await h.join("SLEEPWELL", auth: sam.auth, userId: sam.userId, token: samToken)
            (status, page) = try await Self.search(h, ConsentRecordQuery(limit: 10))
            #expect(page?.records.count == 1)
            #expect(page?.records.first?.participantTokenSHA256 == samHash)
            #expect(page?.records.first?.state == .inForce)
            #expect(page?.records.first?.sharing == "true")
            #expect(page?.records.first?.pdfBytes == first.count)

            // A re-consent sends no sharing choice: the earlier one holds; the earlier consent ends.
            try await Self.consent(h, sam, version: "1.1", sharing: "", pdf: ConsentPDF.pdf("sam signed 1.1"))
            // Tia joins first, starts a consent without finishing it, then withdraws.
            try await h.join("SLEEPWELL", auth: tia.auth, userId: tia.userId, token: tiaToken)
            try await Self.consent(h, tia, version: "1.1", status: "pending", sharing: "false", pdf: nil)
            (status, page) = try await Self.search(h, ConsentRecordQuery(limit: 10))
            var records = page?.records ?? []
            #expect(records.count == 3)
            #expect(records.map(\.version) == ["1.0", "1.1", "1.1"])
            #expect(records.map(\.state) == [.ended, .inForce, .pending])
            #expect(records.map(\.sharing) == ["true", "true", "false"])
            #expect(records[0].endedAt == records[1].signedAt, "ended when the next was signed")
            #expect(records[2].pdfSHA256 == nil)
            let withdrawn = try await h.call("withdraw", method: .delete, body: ["studyId": "SLEEPWELL", "deleteData": false], auth: tia.auth, userId: tia.userId)
            #expect(withdrawn.status == .ok)
            (status, page) = try await Self.search(h, ConsentRecordQuery(limit: 10))
            records = page?.records ?? []
            #expect(records.count == 3)
            #expect(records.map(\.state) == [.ended, .inForce, .ended])
            let tiaLeft = try #require(records[2].endedAt)
            #expect(records[2].changedAt == tiaLeft)

            // Filters: by state, participant, id, change, and a page at a time.
            let ids = records.map(\.id)
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10, state: .inForce)).1?.records.map(\.id) == [ids[1]])
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10, participantTokenSHA256s: [tiaHash])).1?.records.map(\.id) == [ids[2]])
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10, ids: [ids[0], ids[2]])).1?.records.map(\.id) == [ids[0], ids[2]])
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10, changed: .init(ge: tiaLeft))).1?.records.map(\.id) == [ids[2]])
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10, changed: .init(lt: tiaLeft))).1?.records.count == 2)
            #expect(try await Self.search(h, ConsentRecordQuery(after: ids[0], limit: 1)).1?.records.map(\.id) == [ids[1]])
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 1, state: .ended, counting: true)).1?.count == 2)
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10), studyId: "NAPTIME").1?.records.isEmpty == true)

            // The PDF as it was uploaded; none for a record without one, another study's, or a non-number.
            let pdfPath = { (study: String, id: String) in try InternalCalls.consentPDF.path(["studyId": study, "consentId": id]) }
            let (pdfStatus, pdf) = try await Self.raw(h, .get, try pdfPath("SLEEPWELL", String(ids[0]))) { ($0, Data(buffer: $1)) }
            #expect(pdfStatus == .ok)
            #expect(pdf == first)
            for (study, id) in [("SLEEPWELL", String(ids[2])), ("NAPTIME", String(ids[0])), ("SLEEPWELL", "1e3"), ("SLEEPWELL", "99999")] {
                #expect(try await Self.raw(h, .get, try pdfPath(study, id)) { status, _ in status } == .notFound, "\(study) \(id)")
            }

            // Only the response service asks; a query out of bounds is refused.
            #expect(try await Self.search(h, ConsentRecordQuery(limit: 10), as: .studyMetadata).0 == .forbidden)
            #expect(try await Self.raw(h, .get, try pdfPath("SLEEPWELL", String(ids[0])), as: .studyMetadata) { status, _ in status } == .forbidden)
            for bad in [
                ConsentRecordQuery(limit: 0), ConsentRecordQuery(limit: 1_002),
                ConsentRecordQuery(limit: 1, participantTokenSHA256s: [String(repeating: "Z", count: 64)]),
                ConsentRecordQuery(limit: 1, ids: Array(1...1_001)),
            ] {
                #expect(try await Self.search(h, bad).0 == .badRequest)
            }

            // Sam deletes the account: the records stay, linked, and end.
            #expect(try await h.call("deactivate", method: .delete, body: ["deleteData": [String]()], auth: sam.auth, userId: sam.userId).status == .ok)
            records = try await Self.search(h, ConsentRecordQuery(limit: 10)).1?.records ?? []
            #expect(records.count == 3)
            #expect(records.map(\.state) == [.ended, .ended, .ended])
            #expect(records[1].participantTokenSHA256 == samHash)
        }
    }
}
