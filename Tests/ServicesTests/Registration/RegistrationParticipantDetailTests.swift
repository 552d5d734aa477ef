import Crypto
import Foundation
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// One participant on the registration admin API: their consent history with the signed PDFs as
/// the app uploaded them, their activity states, and who may read what.
@Suite(.needsCluster) struct RegistrationParticipantDetailTests {
    /// The participant id Sam's app reports (what the response service knows Sam by).
    static let samAppToken = "0123456789abcdef0123456789abcdef"
    static let first = ConsentPDF.pdf("signed by Sam, version 1.0")
    static let second = ConsentPDF.pdf("signed by Sam, version 1.1")

    /// Sam joins SLEEPWELL, signs consent 1.0 then 1.1 with PDFs, and starts an activity; Tia joins
    /// without consenting.
    func withParticipants(
        _ body: @escaping @Sendable (RegistrationHarness, StudyMetadataFixture.Team, _ sam: String, _ tia: String) async throws -> Void
    ) async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let sam = try await h.signUp("sam@example.org")
            try await h.join("SLEEPWELL", auth: sam.auth, userId: sam.userId, token: Self.samAppToken)
            for (version, pdf) in [("1.0", Self.first), ("1.1", Self.second)] {
                let consent: [String: Any] = [
                    "studyId": "SLEEPWELL", "eligibility": true, "sharing": "true",
                    "consent": ["version": version, "status": "completed", "pdf": pdf.base64EncodedString()],
                ]
                #expect(try await h.call("updateEligibilityConsentStatus", body: consent, auth: sam.auth, userId: sam.userId).status == .ok)
            }
            let start: [String: Any] = ["studyId": "SLEEPWELL", "activity": [[
                "activityId": "daily", "activityRunId": "1", "activityState": "inProgress", "activityVersion": "1.0",
                "activityRun": ["total": 10, "completed": 3, "missed": 1],
            ]]]
            #expect(try await h.call("updateActivityState", body: start, auth: sam.auth, userId: sam.userId).status == .ok)
            let tia = try await h.signUp("tia@example.org")
            try await h.join("SLEEPWELL", auth: tia.auth, userId: tia.userId)

            let listed = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants", token: team.root)
            let page = try JSONDecoder.iso8601.decode(ParticipantList.self, from: listed.body)
            try #require(page.participants.count == 2)
            let ids = Dictionary(uniqueKeysWithValues: page.participants.map { ($0.email ?? "", $0.participantId) })
            try await body(h, team, try #require(ids["sam@example.org"]), try #require(ids["tia@example.org"]))
        }
    }

    func detail(_ h: RegistrationHarness, _ participantId: String, token: String) async throws -> ParticipantDetail {
        let reply = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(participantId)", token: token)
        #expect(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(ParticipantDetail.self, from: reply.body)
    }

    @Test func aStudyAdminReadsTheConsentHistoryAndGetsTheSamePDFBytes() async throws {
        try await withParticipants { h, team, sam, _ in
            let before = try await h.auditActors("participants.identities_read").count
            let detail = try await detail(h, sam, token: team.root)
            #expect(detail.participant.email == "sam@example.org")
            #expect(detail.participant.status == "inProgress")
            #expect(detail.account == AccountState(verified: true, lockedUntil: nil, disabledAt: nil))
            #expect(detail.mayReadConsentPDFs)
            #expect(detail.appTokenSHA256 == SecureToken.hash(Self.samAppToken))
            try #require(detail.consents.count == 2)
            #expect(detail.consents.map(\.version) == ["1.0", "1.1"])
            #expect(detail.consents.allSatisfy { $0.status == "completed" && $0.sharing == "true" && $0.eligibility == true })
            #expect(detail.consents.map(\.pdfSHA256) == [Self.first, Self.second].map { SHA256.hash(data: $0).hexString })
            #expect(detail.consents.map(\.pdfBytes) == [Self.first.count, Self.second.count])
            try #require(detail.activities.count == 1)
            let activity = detail.activities[0]
            #expect((activity.activityId, activity.state, activity.runId) == ("daily", "inProgress", "1"))
            #expect((activity.runsTotal, activity.runsCompleted, activity.runsMissed) == (10, 3, 1))
            #expect(try await h.auditActors("participants.identities_read").count == before + 1)

            for (consent, expected) in zip(detail.consents, [Self.first, Self.second]) {
                let pdf = try await h.admin(
                    .get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/consents/\(consent.consentId)/pdf", token: team.root)
                #expect(pdf.status == .ok)
                #expect(pdf.body == expected)
                #expect(pdf.headers[.contentType] == "application/pdf")
                #expect(pdf.headers[.cacheControl] == "no-store")
                #expect(pdf.headers[.contentDisposition] == "attachment; filename=\"consent-\(consent.consentId).pdf\"")
            }
            #expect(try await h.auditActors("participants.consent_pdf_read") == ["root@studystack.test", "root@studystack.test"])
        }
    }

    @Test func aViewerSeesTheHistoryWithoutTheEmailAndCannotDownloadThePDF() async throws {
        try await withParticipants { h, team, sam, _ in
            let before = try await h.auditActors("participants.identities_read").count
            let detail = try await detail(h, sam, token: team.viewer)
            #expect(detail.participant.email == nil)
            #expect(!detail.mayReadConsentPDFs)
            #expect(detail.consents.map(\.version) == ["1.0", "1.1"])
            #expect(try await h.auditActors("participants.identities_read").count == before, "nothing identifying was read")
            let consentId = try #require(detail.consents.first?.consentId)
            let refused = try await h.admin(
                .get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/consents/\(consentId)/pdf", token: team.viewer)
            #expect(refused.status == .forbidden)
            #expect(!refused.body.starts(with: Array("%PDF".utf8)))
            #expect(try await h.auditActors("participants.consent_pdf_read").isEmpty)
            // A stranger to the study reads nothing of it.
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)", token: team.stranger).status == .forbidden)
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)", token: nil).status == .unauthorized)
        }
    }

    @Test func aConsentIsReachableOnlyThroughItsOwnParticipantAndStudy() async throws {
        try await withParticipants { h, team, sam, tia in
            let consentId = try #require(try await detail(h, sam, token: team.root).consents.first?.consentId)
            let base = "/admin/v1/studies/SLEEPWELL/participants"
            for (path, status) in [
                ("\(base)/\(tia)/consents/\(consentId)/pdf", 404),  // another participant's id
                ("/admin/v1/studies/OTHER/participants/\(sam)/consents/\(consentId)/pdf", 404),  // another study
                ("\(base)/\(UUID().uuidString)/consents/\(consentId)/pdf", 404),
                ("\(base)/\(sam)/consents/999999/pdf", 404),
                ("\(base)/\(sam)/consents/x/pdf", 400),
                ("\(base)/\(sam)/consents/-1/pdf", 400),
                ("\(base)/not-a-uuid", 404),
                ("\(base)/\(UUID().uuidString)", 404),
            ] {
                let reply = try await h.admin(.get, path, token: team.root)
                #expect(reply.status.code == status, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
                #expect(!reply.body.starts(with: Array("%PDF".utf8)))
            }
            #expect(try await h.auditActors("participants.consent_pdf_read").isEmpty)
        }
    }

    @Test func aPDFAlteredAtRestIsNotServed() async throws {
        try await withParticipants { h, team, sam, _ in
            let consentId = try #require(try await detail(h, sam, token: team.root).consents.first?.consentId)
            let files = try FileManager.default.contentsOfDirectory(atPath: h.consentDirectory.path)
            try #require(files.count == 2)
            for file in files {
                let url = h.consentDirectory.appendingPathComponent(file)
                var sealed = try Data(contentsOf: url)
                sealed[sealed.count / 2] ^= 0x01
                try sealed.write(to: url)
            }
            let reply = try await h.admin(
                .get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/consents/\(consentId)/pdf", token: team.root)
            #expect(reply.status == .internalServerError)
            #expect(!reply.body.starts(with: Array("%PDF".utf8)))
            #expect(try await h.auditActors("participants.consent_pdf_read").isEmpty)
        }
    }
}
