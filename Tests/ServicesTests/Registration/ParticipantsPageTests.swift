import Foundation
import HTTPTypes
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `GET /admin/v1/studies/{studyId}/participants-page`: what the console's participants page reads
/// from registration in one call. Each part is exactly what its own call answers to the same
/// parameters, the addresses it shows are audited once, and every parameter is checked first.
@Suite(.needsCluster) struct ParticipantsPageTests {
    let participants = RegistrationParticipantDetailTests()
    let study = "/admin/v1/studies/SLEEPWELL"

    func decoded<T: Decodable>(_ type: T.Type, _ reply: (status: HTTPResponse.Status, body: Data, headers: HTTPFields)) throws -> T {
        try #require(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(type, from: reply.body)
    }

    @Test func eachPartIsWhatItsOwnCallAnswersToTheSameParameters() async throws {
        try await participants.withParticipants { h, team, sam, tia in
            #expect(try await h.admin(.post, study + "/sites", token: team.root, body: #"{"name": "Leeds"}"#).status == .created)
            let hash = SecureToken.hash(RegistrationParticipantDetailTests.samAppToken)
            let sites = try decoded(SiteList.self, try await h.admin(.get, study + "/sites?counts=false", token: team.viewer))
            try #require(sites.sites.count == 1)
            let adherence = try decoded(ActivityAdherence.self, try await h.admin(.get, study + "/adherence", token: team.viewer))
            let reminders = try decoded(ConsentReminderSummary.self, try await h.admin(.get, study + "/consent-reminders", token: team.viewer))

            let queries = [
                "", "?limit=1", "?q=sam", "?status=inProgress", "?sort=enrolledAt&order=desc", "?consent=owed",
                "?appTokenSHA256=\(hash.uppercased())", "?after=\(sam)",
            ]
            for query in queries {
                for token in [team.root, team.viewer] {
                    let list = try decoded(ParticipantList.self, try await h.admin(.get, study + "/participants" + query, token: token))
                    let before = try await h.auditActors("participants.identities_read").count
                    let page = try decoded(ParticipantsPageReply.self, try await h.admin(.get, study + "/participants-page" + query, token: token))
                    let audited = try await h.auditActors("participants.identities_read").count - before
                    #expect(page.participants == list, "\(query)")
                    #expect(page.sites == sites)
                    #expect(page.adherence == adherence)
                    #expect(page.consentReminders == reminders)
                    #expect(page.consentRemindersProblem == nil)
                    // A super-admin's reading of addresses is audited once a call; a viewer sees none.
                    #expect(audited == (token == team.root && !list.participants.isEmpty ? 1 : 0), "\(query)")
                    if token == team.viewer { #expect(page.participants.participants.allSatisfy { $0.email == nil }) }
                }
            }
            // The parameters reach the list: one page of one, the search and the hash find Sam alone.
            let one = try decoded(ParticipantsPageReply.self, try await h.admin(.get, study + "/participants-page?limit=1", token: team.viewer))
            #expect(one.participants.participants.count == 1 && one.participants.next != nil)
            let found = try decoded(
                ParticipantsPageReply.self, try await h.admin(.get, study + "/participants-page?appTokenSHA256=\(hash)", token: team.viewer))
            #expect(found.participants.participants.map(\.participantId) == [sam])
            let all = try decoded(ParticipantsPageReply.self, try await h.admin(.get, study + "/participants-page", token: team.viewer))
            #expect(Set(all.participants.participants.map(\.participantId)) == [sam, tia])
        }
    }

    @Test func badQuestionsAreRefusedByNameBeforeAnythingIsReadAndStrangersAreToldSo() async throws {
        try await participants.withParticipants { h, team, _, _ in
            let before = try await h.auditActors("participants.identities_read").count
            for (query, field) in [
                ("?status=asleep", "status"), ("?site=not-a-site", "site"), ("?sort=email", "sort"), ("?order=up", "order"),
                ("?consent=signed", "consent"), ("?limit=0", "limit"), ("?limit=501", "limit"),
                ("?limit=\(String(repeating: "9", count: 30))", "limit"), ("?after=not-a-uuid", "after"),
                ("?q=\(String(repeating: "a", count: 101))", "q"), ("?appTokenSHA256=xyz", "appTokenSHA256"),
                ("?appTokenSHA256=\(String(repeating: "g", count: 64))", "appTokenSHA256"),
                // 64 bytes with a fullwidth Ａ, a hex digit to `Character`: not 64 hex digits.
                ("?appTokenSHA256=\(String(repeating: "a", count: 61))%EF%BC%A1", "appTokenSHA256"),
            ] {
                let refused = try await h.admin(.get, study + "/participants-page" + query, token: team.root)
                #expect(refused.status == .badRequest, "\(query)")
                let message = try JSONDecoder().decode(JSONValue.self, from: refused.body)["error"]?["message"]?.text ?? ""
                #expect(message.contains(field), "\(query): \(message)")
            }
            // Nothing was read for a refused question.
            #expect(try await h.auditActors("participants.identities_read").count == before)
            #expect(try await h.admin(.get, study + "/participants-page", token: team.stranger).status == .forbidden)
            #expect(try await h.admin(.get, study + "/participants-page", token: nil).status == .unauthorized)
        }
    }

    @Test func aStudyWithNothingPublishedListsNoOneAndSaysWhyTheRemindersCannotBeTold() async throws {
        try await participants.withParticipants { h, team, _, _ in
            let reply = try await h.admin(.get, "/admin/v1/studies/UNPUBLISHED/participants-page", token: team.root)
            let page = try decoded(ParticipantsPageReply.self, reply)
            #expect(page.participants.participants.isEmpty)
            #expect(page.sites.sites.isEmpty)
            #expect(page.consentReminders == nil)
            let problem = try #require(page.consentRemindersProblem)
            #expect(problem.contains("UNPUBLISHED"), "\(problem)")
            // The reminders' own call refuses the same question with the same words.
            let own = try await h.admin(.get, "/admin/v1/studies/UNPUBLISHED/consent-reminders", token: team.root)
            #expect(own.status != .ok)
            let message = try JSONDecoder().decode(JSONValue.self, from: own.body)["error"]?["message"]?.text ?? ""
            #expect(message == problem)
        }
    }
}
