import Foundation
import StudyModels
import Testing
import TestSupport

/// J4 step 6 and J8: consent records with their signed PDFs, by version.
@Suite(.needsCluster) struct RegistrationConsentTests {
    @Test func consentVersionsAreKeptWithTheirPDFs() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], overrides: ["consent.maxBytes": "4096"]) { h in
            let (userId, auth, _) = try await h.signUp("sam@example.org")
            let first = ConsentPDF.pdf("signed version 1.0")
            let consent: [String: Any] = [
                "studyId": "SLEEPWELL", "eligibility": true, "sharing": "true",
                "consent": ["version": "1.0", "status": "completed", "pdf": first.base64EncodedString()],
            ]
            #expect(try await h.call("updateEligibilityConsentStatus", body: consent, auth: auth, userId: userId).status == .ok)

            var reply = try await h.call("consentPDF", method: .get, query: "studyId=SLEEPWELL&consentVersion=", auth: auth, userId: userId)
            #expect(reply.status == .ok)
            #expect(reply.json["sharing"] == .string("true"))
            #expect(reply.json["consent"]?.object?["version"] == .string("1.0"))
            #expect(reply.json["consent"]?.object?["type"] == .string("application/pdf"))
            #expect(reply.json["consent"]?.object?["content"]?.text.flatMap { Data(base64Encoded: $0) } == first)

            // Re-consent to 1.1 (sharing "" as the 2020 app sends it): the newest is served, 1.0 stays.
            let second = ConsentPDF.pdf("signed version 1.1")
            let reconsent: [String: Any] = [
                "studyId": "SLEEPWELL", "eligibility": true, "sharing": "",
                "consent": ["version": "1.1", "status": "completed", "pdf": second.base64EncodedString()],
            ]
            #expect(try await h.call("updateEligibilityConsentStatus", body: reconsent, auth: auth, userId: userId).status == .ok)
            reply = try await h.call("consentPDF", method: .get, query: "studyId=SLEEPWELL&consentVersion=", auth: auth, userId: userId)
            #expect(reply.json["consent"]?.object?["version"] == .string("1.1"))
            reply = try await h.call("consentPDF", method: .get, query: "studyId=SLEEPWELL&consentVersion=1.0", auth: auth, userId: userId)
            #expect(reply.json["consent"]?.object?["content"]?.text.flatMap { Data(base64Encoded: $0) } == first)

            // At rest the PDFs are sealed; the database holds their SHA-256.
            let files = try FileManager.default.contentsOfDirectory(atPath: h.consentDirectory.path)
            #expect(files.count == 2)
            for file in files {
                let stored = try Data(contentsOf: h.consentDirectory.appendingPathComponent(file))
                #expect(!stored.starts(with: Array("%PDF".utf8)))
            }
            let rows = try await h.postgres.query(
                "SELECT version, pdf_sha256, pdf_bytes FROM consent_records ORDER BY id", logger: .init(label: "t"))
            var records: [(String, String?, Int?)] = []
            for try await row in rows.decode((String, String?, Int?).self) { records.append(row) }
            #expect(records.map(\.0) == ["1.0", "1.1"])
            #expect(records.first?.2 == first.count)
            #expect(records.first?.1?.count == 64)

            // Bad input is refused and stores nothing.
            for (body, message) in [
                (["studyId": "SLEEPWELL", "consent": ["status": "completed"]], "Consent version is required"),
                (["studyId": "SLEEPWELL", "consent": ["version": "1.2", "pdf": Data("hello".utf8).base64EncodedString()]],
                 "The consent document is not a PDF."),
                (["studyId": "SLEEPWELL", "consent": ["version": "1.2", "pdf": ConsentPDF.pdf(String(repeating: "x", count: 5000)).base64EncodedString()]],
                 "The consent PDF is too large."),
            ] as [([String: Any], String)] {
                let refused = try await h.call("updateEligibilityConsentStatus", body: body, auth: auth, userId: userId)
                #expect(refused.status == .badRequest)
                #expect(refused.statusMessage == message)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: h.consentDirectory.path).count == 2)

            // Nobody else reads it.
            let other = try await h.signUp("tia@example.org")
            #expect(try await h.call("consentPDF", method: .get, query: "studyId=SLEEPWELL", auth: other.auth, userId: userId)
                .status == .forbidden)
            let none = try await h.call("consentPDF", method: .get, query: "studyId=SLEEPWELL", auth: other.auth, userId: other.userId)
            #expect(none.status == .notFound)
            #expect(none.statusMessage == "No consent document found.")
        }
    }
}
