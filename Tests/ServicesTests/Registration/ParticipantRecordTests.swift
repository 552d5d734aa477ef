import Foundation
import HTTPTypes
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `GET /admin/v1/studies/{studyId}/participant-record`: what the console's participant page reads
/// from registration in one call. Each part is exactly what its own call answers, by id or by the
/// hash of the participant id the app holds, audited once, and every parameter is checked first.
@Suite(.needsCluster) struct ParticipantRecordTests {
    let participants = RegistrationParticipantDetailTests()
    let path = "/admin/v1/studies/SLEEPWELL/participant-record"

    func decoded<T: Decodable>(_ type: T.Type, _ reply: (status: HTTPResponse.Status, body: Data, headers: HTTPFields)) throws -> T {
        try #require(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(type, from: reply.body)
    }

    @Test func theRecordIsEachPartAsItsOwnCallAnswersItByIdOrByHash() async throws {
        try await participants.withParticipants { h, team, sam, _ in
            let hash = SecureToken.hash(RegistrationParticipantDetailTests.samAppToken)
            // Sam enrolled ten days ago; the window is the last five days and the next seven.
            let formatter = ISO8601DateFormatter()
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let day: TimeInterval = 86_400
            let enrolledAt = formatter.string(from: now.addingTimeInterval(-10 * day))
            try await h.sql("UPDATE participant_studies SET enrolled_at = \(enrolledAt)::timestamptz WHERE pseudonym = \(sam)::uuid")
            // The new enrolment makes their ledger due, and the count sweep recounts their weeks in
            // the background: the parts below are compared once it has (their weeks then reach
            // back past last week), not while it may land between two reads.
            let lastWeek = UTCDay.string(now.addingTimeInterval(-7 * day))
            try await eventually("Sam's weeks counted from the new enrolment", within: .seconds(60)) {
                try decoded(
                    ParticipantRunWeeks.self,
                    try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/runs/weeks?weeks=4", token: team.viewer))
            } until: { $0.weeks.contains { $0.week <= lastWeek } }
            let to = formatter.string(from: now.addingTimeInterval(7 * day))
            let window = "from=\(formatter.string(from: now.addingTimeInterval(-5 * day)))&to=\(to)"
            let detail = try decoded(ParticipantDetail.self, try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)", token: team.root))
            let before = try await h.auditActors("participants.identities_read").count
            let byId = try decoded(
                ParticipantRecordReply.self, try await h.admin(.get, path + "?participantId=\(sam)&\(window)&weeks=4", token: team.root))
            // One call, one audit event for the address it showed.
            #expect(try await h.auditActors("participants.identities_read").count == before + 1)
            let byHash = try decoded(
                ParticipantRecordReply.self,
                try await h.admin(.get, path + "?appTokenSHA256=\(hash.uppercased())&\(window)&weeks=4", token: team.root))
            #expect(byId == byHash)
            #expect(byId.participant == detail)
            #expect(byId.runsProblem == nil)

            // Their runs and weeks, as the calls of their own give them over the same window.
            let runs = try decoded(
                ParticipantRunsReply.self,
                try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/runs?\(window)", token: team.viewer))
            let recordRuns = try #require(byId.runs)
            #expect(recordRuns.runs == runs.runs)
            #expect(recordRuns.to == runs.to)
            #expect(!recordRuns.runs.isEmpty)
            let weeks = try decoded(
                ParticipantRunWeeks.self,
                try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/runs/weeks?weeks=4", token: team.viewer))
            #expect(byId.weeks == weeks)

            // A window that starts before they enrolled starts at their enrolment.
            let early = try decoded(
                ParticipantRecordReply.self,
                try await h.admin(
                    .get, path + "?participantId=\(sam)&from=\(formatter.string(from: now.addingTimeInterval(-300 * day)))&to=\(to)",
                    token: team.viewer))
            let fromEnrolment = try decoded(
                ParticipantRunsReply.self,
                try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(sam)/runs?from=\(enrolledAt)&to=\(to)", token: team.viewer))
            #expect(!fromEnrolment.runs.isEmpty)
            #expect(early.runs?.from == fromEnrolment.from)
            #expect(early.runs?.runs == fromEnrolment.runs)
            // A viewer sees no address, and no audit event is written for them (the two above are
            // the super-admin's two readings).
            #expect(early.participant.participant.email == nil)
            #expect(try await h.auditActors("participants.identities_read").count == before + 2)

            // Enrolled after the window ends (their date moved on): no runs in it, and no refusal.
            let afterWindow = formatter.string(from: now.addingTimeInterval(20 * day))
            try await h.sql("UPDATE participant_studies SET enrolled_at = \(afterWindow)::timestamptz WHERE pseudonym = \(sam)::uuid")
            let later = try decoded(ParticipantRecordReply.self, try await h.admin(.get, path + "?participantId=\(sam)&\(window)", token: team.viewer))
            #expect(later.runs?.runs == [])

            // Not enrolled: the record alone.
            try await h.sql("UPDATE participant_studies SET enrolled_at = NULL WHERE pseudonym = \(sam)::uuid")
            let waiting = try decoded(ParticipantRecordReply.self, try await h.admin(.get, path + "?participantId=\(sam)", token: team.viewer))
            #expect(waiting.runs == nil && waiting.weeks == nil && waiting.runsProblem == nil)
            #expect(waiting.participant.participant.participantId == sam)
        }
    }

    @Test func badQuestionsAreRefusedByNameAndStrangersAndUnknownsAreToldSo() async throws {
        try await participants.withParticipants { h, team, sam, tia in
            let before = try await h.auditActors("participants.identities_read").count
            let hash = SecureToken.hash(RegistrationParticipantDetailTests.samAppToken)
            for (query, field) in [
                ("", "participantId"), ("?participantId=\(sam)&appTokenSHA256=\(hash)", "participantId"),
                ("?participantId=not-a-uuid", "participantId"), ("?appTokenSHA256=xyz", "appTokenSHA256"),
                ("?appTokenSHA256=\(String(repeating: "g", count: 64))", "appTokenSHA256"),
                ("?participantId=\(sam)&from=yesterday", "from"), ("?participantId=\(sam)&from=2026-04-01T00:00:00Z&to=2026-03-01T00:00:00Z", "from"),
                ("?participantId=\(sam)&to=2099-01-01T00:00:00Z&from=2098-12-01T00:00:00Z", "to"),
                ("?participantId=\(sam)&weeks=0", "weeks"), ("?participantId=\(sam)&weeks=106", "weeks"),
                ("?participantId=\(sam)&weeks=\(String(repeating: "9", count: 30))", "weeks"),
            ] {
                let refused = try await h.admin(.get, path + query, token: team.root)
                #expect(refused.status == .badRequest, "\(query)")
                let message = try JSONDecoder().decode(JSONValue.self, from: refused.body)["error"]?["message"]?.text ?? ""
                #expect(message.contains(field), "\(query): \(message)")
            }
            // Nothing was read for a refused question.
            #expect(try await h.auditActors("participants.identities_read").count == before)
            #expect(try await h.admin(.get, path + "?participantId=\(sam)", token: team.stranger).status == .forbidden)
            #expect(try await h.admin(.get, path + "?participantId=\(sam)", token: nil).status == .unauthorized)
            #expect(try await h.admin(.get, path + "?participantId=\(UUID().uuidString)", token: team.viewer).status == .notFound)
            #expect(try await h.admin(.get, path + "?appTokenSHA256=\(String(repeating: "ab", count: 32))", token: team.viewer).status == .notFound)
            // Each is found as themselves.
            let record = try decoded(ParticipantRecordReply.self, try await h.admin(.get, path + "?participantId=\(tia)", token: team.viewer))
            #expect(record.participant.participant.participantId == tia)
            #expect(record.participant.appTokenSHA256 != hash)
        }
    }
}
