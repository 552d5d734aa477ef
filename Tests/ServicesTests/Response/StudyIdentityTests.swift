import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Study, app, org and activity ids are unique whatever their case, in every service: the
/// response service keys studies by the upper-cased id (as LabKey did), so two ids that differ
/// only in case would be one study there. The review's attack: an admin with no role on `SECVX`
/// creates and launches `secvx` and, through the response service, reads `SECVX`'s data.
@Suite struct StudyIdentityTests {
    let example = ExampleStudy()

    let drafts = MetadataAdmin()

    @Test(.needsCluster) func aStudyIdTakenInAnotherCaseIsRefusedAndGivesNoRole() async throws {
        try await drafts.withService { client, root, url in
            #expect(try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
            let (_, owner) = try await drafts.makeAdmin(client, root: root, email: "owner@studystack.test")
            let (_, attacker) = try await drafts.makeAdmin(client, root: root, email: "attacker@studystack.test")
            #expect(try await drafts.send(
                client, .put, "/admin/v1/studies/SECVX/draft", token: owner, body: try example.document(studyId: "SECVX")).0 == .created)

            for spelling in ["secvx", "SecVX"] {
                let (status, body) = try await drafts.send(
                    client, .put, "/admin/v1/studies/\(spelling)/draft", token: attacker, body: try example.document(studyId: spelling))
                #expect(status == .conflict, "\(spelling): \(String(buffer: body))")
                #expect(String(buffer: body).contains("study SECVX exists"))
            }
            let (_, me) = try await drafts.send(client, .get, "/admin/v1/me", token: attacker)
            #expect(String(buffer: me).contains(#""studyRoles":{}"#), "\(String(buffer: me))")
            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query("SELECT study_id FROM studies ORDER BY study_id", logger: logger)
                var ids: [String] = []
                for try await id in rows.decode(String.self) { ids.append(id) }
                #expect(ids == ["SECVX"])
            }
        }
    }

    @Test(.needsCluster) func appAndOrgIdsAreUniqueWhateverTheirCase() async throws {
        try await drafts.withService { client, root, _ in
            #expect(try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
            let sameAppOtherCase = MetadataAdmin.demoApp.replacingOccurrences(of: #""appId":"DEMOAPP""#, with: #""appId":"demoapp""#)
            let (appStatus, appBody) = try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: sameAppOtherCase)
            #expect(appStatus == .conflict, "\(String(buffer: appBody))")

            let otherAppSameOrgOtherCase = MetadataAdmin.demoApp
                .replacingOccurrences(of: #""appId":"DEMOAPP""#, with: #""appId":"SECONDAPP""#)
                .replacingOccurrences(of: #""orgId":"DEMOORG""#, with: #""orgId":"demoorg""#)
            let (orgStatus, orgBody) = try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: otherAppSameOrgOtherCase)
            #expect(orgStatus == .conflict, "\(String(buffer: orgBody))")
            #expect(String(buffer: orgBody).contains("DEMOORG"))

            // The org spelled as it is stored is fine.
            let otherAppSameOrg = MetadataAdmin.demoApp.replacingOccurrences(of: #""appId":"DEMOAPP""#, with: #""appId":"SECONDAPP""#)
            #expect(try await drafts.send(client, .post, "/admin/v1/apps", token: root, body: otherAppSameOrg).0 == .created)
        }
    }

    @Test(.needsCluster) func aRoleIsGrantedOnlyOnAStudyThatExists() async throws {
        try await drafts.withService { client, root, _ in
            let (adminId, _) = try await drafts.makeAdmin(client, root: root, email: "early@studystack.test")
            // A role on an id nobody has created would make its future creator's study the grantee's.
            let (status, _) = try await drafts.send(
                client, .put, "/admin/v1/studies/NOTYET/roles/\(adminId)", token: root, body: #"{"role":"viewer"}"#)
            #expect(status == .notFound)
        }
    }

    @Test func activityIdsThatDifferOnlyInCaseAreOneIdTwice() throws {
        let example = try Data(contentsOf: MetadataAdmin.exampleURL)
        var document = try JSONDecoder().decode(StudyDocument.self, from: example)
        try #require(!document.activities.isEmpty)
        var twin = document.activities[0]
        twin.activityId = document.activities[0].activityId.lowercased() == document.activities[0].activityId
            ? document.activities[0].activityId.uppercased() : document.activities[0].activityId.lowercased()
        document.activities.append(twin)
        let (problems, _, _) = StudyValidator.review(document)
        #expect(problems.contains { $0.pointer == "/activities/\(document.activities.count - 1)/activityId" }, "\(problems)")
    }

    @Test(.needsCluster) func aStudyEventNeverRenamesAStoredStudy() async throws {
        try await ResponseHarness.run { h in
            #expect(try await h.studyEvent("SECVX", status: .active, version: 1) == .ok)
            // The same key in another case, newer: refused, and the stored study keeps its id and state.
            #expect(try await h.studyEvent("secvx", status: .paused, version: 2) == .conflict)
            let rows = try await h.postgres.query(
                "SELECT study_id, status, version FROM studies", logger: Logger(label: "test"))
            var stored: [(String, String, Int)] = []
            for try await row in rows.decode((String, String, Int).self) { stored.append(row) }
            try #require(stored.count == 1)
            #expect(stored[0].0 == "SECVX")
            #expect(stored[0].1 == "active")
            #expect(stored[0].2 == 1)
            // The genuine study's next event still applies.
            #expect(try await h.studyEvent("SECVX", status: .paused, version: 2) == .ok)
        }
    }
}
