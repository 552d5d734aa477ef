import Foundation
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// Consent uploads store a file of up to `consent.maxBytes` per call: only a verified account of
/// a real app may store them, only for a published study of that app, and only so many per study.
@Suite(.needsCluster) struct ConsentUploadAttackTests {
    func storedFiles(_ h: RegistrationHarness) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: h.consentDirectory.path)) ?? []).count
    }

    func upload(_ h: RegistrationHarness, studyId: String, version: String, auth: String, userId: String)
        async throws -> RegistrationHarness.Reply
    {
        let pdf = ConsentPDF.pdf("signed \(version)").base64EncodedString()
        return try await h.call(
            "updateEligibilityConsentStatus",
            body: ["studyId": studyId, "eligibility": true, "sharing": "true",
                   "consent": ["version": version, "status": "completed", "pdf": pdf]],
            auth: auth, userId: userId)
    }

    func count(_ h: RegistrationHarness, _ sql: String) async throws -> Int { try await h.postgres.count(PostgresQuery(unsafeSQL: sql)) }

    @Test func signUpNeedsAnAppThatExists() async throws {
        try await RegistrationHarness.run { h in
            let reply = try await h.call(
                "register", body: ["emailId": "ghost@example.org", "password": "Passw0rd!"], appId: "NOSUCHAPP", orgId: "DEMOORG")
            #expect(reply.status == .badRequest)
            #expect(reply.statusMessage == "Unknown app: check the applicationId and orgId headers.")
            let wrongOrg = try await h.call(
                "register", body: ["emailId": "ghost@example.org", "password": "Passw0rd!"], appId: "DEMOAPP", orgId: "OTHERORG")
            #expect(wrongOrg.status == .badRequest)
            #expect(try await count(h, "SELECT count(*)::int FROM participants") == 0)
        }
    }

    @Test func onlyAPublishedStudyOfOnesOwnAppTakesAConsent() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"]) { h in
            let user = try await h.signUp("eve@example.org")
            for studyId in ["NOSUCHSTUDY", "sleepwell", "../../etc"] {
                let reply = try await upload(h, studyId: studyId, version: "1.0", auth: user.auth, userId: user.userId)
                #expect(reply.status == .badRequest, "\(studyId)")
                #expect(reply.statusMessage == "This study is not available.", "\(studyId)")
            }
            #expect(storedFiles(h) == 0)
            #expect(try await count(h, "SELECT count(*)::int FROM consent_records") == 0)
            #expect(try await upload(h, studyId: "SLEEPWELL", version: "1.0", auth: user.auth, userId: user.userId).status == .ok)
            #expect(storedFiles(h) == 1)
        }
    }

    @Test func anUnverifiedAccountStoresNothing() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"]) { h in
            let registered = try await h.call("register", body: ["emailId": "new@example.org", "password": "Passw0rd!"])
            let auth = try #require(registered.string("auth"))
            let userId = try #require(registered.string("userId"))
            let reply = try await upload(h, studyId: "SLEEPWELL", version: "1.0", auth: auth, userId: userId)
            #expect(reply.status == .forbidden)
            #expect(storedFiles(h) == 0)
            #expect(try await count(h, "SELECT count(*)::int FROM consent_records") == 0)
        }
    }

    @Test func documentsPerStudyAreCapped() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"]) { h in
            let user = try await h.signUp("fill@example.org")
            for index in 0..<20 {
                let reply = try await upload(h, studyId: "SLEEPWELL", version: "1.\(index)", auth: user.auth, userId: user.userId)
                #expect(reply.status == .ok, "upload \(index): \(reply.statusMessage ?? "")")
            }
            let over = try await upload(h, studyId: "SLEEPWELL", version: "9.9", auth: user.auth, userId: user.userId)
            #expect(over.status == .badRequest)
            #expect(over.statusMessage == "Too many consent documents for this study.")
            #expect(storedFiles(h) == 20)
            #expect(try await count(h, "SELECT count(*)::int FROM consent_records") == 20)
        }
    }
}
