import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StudyModels
import Testing
import TestSupport

/// A study's team and audit log at the admin API: its study admins list the team, give roles by
/// e-mail and read the study's own events; nobody else does.
@Suite(.needsCluster) struct StudyTeamAPITests {
    let admin = MetadataAdmin()

    @Test func studyAdminsManageTheirTeamAndReadTheirOwnAuditOnly() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let (_, owner) = try await admin.makeAdmin(client, root: root, email: "owner@team.test")
            let (_, colleague) = try await admin.makeAdmin(client, root: root, email: "colleague@team.test")
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            // The owner creates the study and so is its study admin.
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: owner, body: example).0 == .created)

            let (listed, team) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/team", token: owner)
            #expect(listed == .ok)
            let members = try JSONDecoder().decode(StudyTeam.self, from: Data(buffer: team)).members
            #expect(members.map(\.email) == ["owner@team.test"])
            #expect(members.first?.role == .studyAdmin)

            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/team", token: owner,
                                         body: #"{"email":"nobody@team.test","role":"viewer"}"#).0 == .notFound)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/team", token: owner,
                                         body: #"{"email":"COLLEAGUE@team.test","role":"viewer"}"#).0 == .ok)
            let (_, after) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/team", token: owner)
            #expect(try JSONDecoder().decode(StudyTeam.self, from: Data(buffer: after)).members.map(\.email) == ["colleague@team.test", "owner@team.test"])
            // Each sees their own role in the study's summary and in the list.
            let (_, ownerSummary) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL", token: owner)
            #expect(try JSONDecoder.iso8601.decode(StudySummary.self, from: Data(buffer: ownerSummary)).role == .studyAdmin)
            let (_, viewerSummary) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL", token: colleague)
            #expect(try JSONDecoder.iso8601.decode(StudySummary.self, from: Data(buffer: viewerSummary)).role == .viewer)
            let (_, viewerList) = try await admin.send(client, .get, "/admin/v1/studies", token: colleague)
            let listedStudies = try JSONDecoder.iso8601.decode(StudyList.self, from: Data(buffer: viewerList)).studies
            #expect(listedStudies.count == 1)
            #expect(listedStudies.first?.role == .viewer)
            // A viewer neither lists nor grants.
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/team", token: colleague).0 == .forbidden)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/team", token: colleague,
                                         body: #"{"email":"colleague@team.test","role":"study_admin"}"#).0 == .forbidden)

            // The audit log: the study's own events for its study admin, nothing else.
            let (auditStatus, audit) = try await admin.send(client, .get, "/admin/v1/audit?studyId=SLEEPWELL", token: owner)
            #expect(auditStatus == .ok)
            let events = try JSONDecoder.iso8601.decode(EventList.self, from: Data(buffer: audit)).events
            #expect(events.count >= 2)
            #expect(events.allSatisfy { $0.studyId == "SLEEPWELL" })
            #expect(events.contains { $0.action == "study.role_granted" })
            #expect(try await admin.send(client, .get, "/admin/v1/audit", token: owner).0 == .forbidden, "the whole log is a super-admin's")
            #expect(try await admin.send(client, .get, "/admin/v1/audit?studyId=SLEEPWELL", token: colleague).0 == .forbidden)
            #expect(try await admin.send(client, .get, "/admin/v1/audit", token: root).0 == .ok)
        }
    }

    struct EventList: Decodable {
        struct Event: Decodable {
            var action: String
            var studyId: String?
        }

        var events: [Event]
    }
}
