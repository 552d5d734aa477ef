import Foundation
import InternalContracts
import HTTPTypes
import NIOCore
import StudyModels
import Testing
import TestSupport

/// Schedules anchored to a participant's answer or property on the registration service: the
/// answer reaches it with the response through the response service's feed, the property through
/// the response service's outbox, and the runs count from them.
@Suite(.needsCluster) struct ParticipantAnchorRunsTests {
    /// A date answer as the iOS app writes it.
    static func diagnosis(_ date: String) -> [[String: Any]] {
        [["resultType": "date", "key": "diagnosisDate", "value": "\(date)T00:00:00.000+1100", "skipped": false,
          "startTime": "\(date)T09:00:00.000+1100", "endTime": "\(date)T09:00:10.000+1100"]]
    }

    /// Uploads the research team's surgery date for `token` (as an editor would, in CSV).
    static func uploadSurgeryDate(_ response: ResponseHarness, token: String, date: String, admin: String) async throws {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(admin)"
        headers[.contentType] = "text/csv"
        let status = try await response.client.execute(
            uri: "/admin/v1/studies/SLEEPWELL/participant-properties", method: .put, headers: headers,
            body: ByteBuffer(string: "token,surgeryDate\n\(token),\(date)\n")) { $0.status }
        #expect(status == .ok)
    }

    @Test func runsCountFromTheAnswerAndThePropertyThatArrived() async throws {
        try await ParticipantRunsTests.withServices { h, response, team in
            let runs = ParticipantRunsTests()
            // The team gave Sam's enrolment token a surgery date before he enrolled with it.
            let token = try #require(try await response.tokens(1, study: "SLEEPWELL").first)
            try await Self.uploadSurgeryDate(response, token: token, date: "2026-03-23", admin: team.root)
            let appToken = try await ParticipantRunsTests.enrolSam(h, response, token: token).appToken
            // Enrolling sent his date properties to registration.
            try await eventually("the surgery date sent at enrolment", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM participant_property_dates WHERE dates->>'surgerydate' = '2026-03-23'")
            } until: { $0 == 1 }
            let listed = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants", token: team.root)
            let participant = try #require(try JSONDecoder.iso8601.decode(ParticipantList.self, from: listed.body).participants.first?.participantId)
            let window = "?from=2026-03-20T00:00:00%2B11:00&to=2026-04-10T00:00:00%2B10:00"

            // postSurgery's runs are days 1 to 3 and 14 to 16 after the surgery, from 09:00 on
            // his clock (after 5 April, +10:00). followUp counts from an answer not yet given.
            var (_, listedRuns) = try await runs.fetch(h, participant, window, token: team.viewer)
            #expect(listedRuns["postSurgery"]?.map { "\($0.runId) \($0.start) \($0.end ?? "open")" } == [
                "1 2026-03-24T09:00:00+11:00 2026-03-26T23:59:59+11:00",
                "2 2026-04-06T09:00:00+10:00 2026-04-08T23:59:59+10:00",
            ])
            #expect(listedRuns["followUp"] == nil)

            // His baseline answer: diagnosed on 1 March. followUp opens 30 days later, at 10:00,
            // monthly.
            try await ParticipantRunsTests.submit(
                response, appToken: appToken, activity: "baseline", run: "1", endTime: "2026-03-20T11:00:00.000+1100",
                results: Self.diagnosis("2026-03-01"))
            try await eventually("followUp listed from the answer", within: .seconds(30)) {
                try await runs.fetch(h, participant, window, token: team.viewer).1["followUp"]?.map(\.start)
            } until: { $0 == ["2026-03-31T10:00:00+11:00"] }
            // A later answer replaces it: diagnosed on 5 March.
            try await ParticipantRunsTests.submit(
                response, appToken: appToken, activity: "baseline", run: "1", endTime: "2026-03-21T11:00:00.000+1100",
                results: Self.diagnosis("2026-03-05"))
            try await eventually("followUp moved by the later answer", within: .seconds(30)) {
                try await runs.fetch(h, participant, window, token: team.viewer).1["followUp"]?.map(\.start)
            } until: { $0 == ["2026-04-04T10:00:00+11:00"] }

            // The team corrects the surgery date after he enrolled: the upload reaches registration too.
            try await Self.uploadSurgeryDate(response, token: token, date: "2026-03-30", admin: team.root)
            try await eventually("the corrected surgery date", within: .seconds(30)) {
                try await runs.fetch(h, participant, window, token: team.viewer).1["postSurgery"]?.map(\.start)
            } until: { $0 == ["2026-03-31T09:00:00+11:00"] }
            (_, listedRuns) = try await runs.fetch(h, participant, window, token: team.viewer)
            #expect(listedRuns["postSurgery"]?.first?.end == "2026-04-02T23:59:59+11:00")

            // The kept standings count them too: both activities have a run opened.
            try await eventually("the standings counted with both anchors", within: .seconds(30)) {
                try await h.count(
                    "SELECT count(*)::int FROM participant_activity_standings WHERE activity_id IN ('followUp', 'postSurgery') AND runs_opened > 0")
            } until: { $0 == 2 }
        }
    }

    /// A study event stored before its new property's column was added (that step failed, to be
    /// retried): enrolling still works, and sends the dates whose columns are there.
    @Test func anEnrolmentDoesNotWaitForANewPropertysColumn() async throws {
        try await ParticipantRunsTests.withServices { h, response, team in
            let visitDate = ParticipantProperty(key: "visitDate", timing: .preEnrollment, dataType: .date, useAsAnchor: true)
            #expect(try await response.studyEvent("SLEEPWELL", version: 100, properties: [ParticipantRunsTests.surgeryDate, visitDate]) == .ok)
            let token = try #require(try await response.tokens(1, study: "SLEEPWELL").first)
            try await Self.uploadSurgeryDate(response, token: token, date: "2026-03-23", admin: team.root)
            try await response.sql(#"ALTER TABLE "study_SLEEPWELL"."ParticipantProperties" DROP COLUMN "visitDate""#)
            try await response.sql("DELETE FROM response_columns WHERE name = 'visitDate'")
            _ = try await ParticipantRunsTests.enrolSam(h, response, token: token)
            try await eventually("the surgery date sent at enrolment", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM participant_property_dates WHERE dates = '{\"surgerydate\": \"2026-03-23\"}'")
            } until: { $0 == 1 }
        }
    }

    @Test func propertyDatesComeOnlyFromTheResponseServiceAndOnlyWellFormed() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"]) { h in
            let path = try InternalCalls.propertyDates.path(["studyId": "SLEEPWELL"])
            let hash = String(repeating: "ab", count: 32)
            func body(_ dates: [String: String], hash: String = hash, asOf: String = "2026-03-01T00:00:00.000Z") -> [UInt8] {
                let object: [String: Any] = ["asOf": asOf, "participants": [["participantTokenSHA256": hash, "dates": dates]]]
                return Array(try! JSONSerialization.data(withJSONObject: object))
            }
            // Another service may not send them.
            #expect(try await h.signed(.put, path, body: body(["surgerydate": "2026-03-23"]), as: .studyMetadata).0 == .forbidden)
            // A date that is not one, a key too long, a hash that is not hex: refused whole, nothing kept.
            for bad in [
                body(["surgerydate": "2026-02-30"]), body(["surgerydate": "23/03/2026"]),
                body([String(repeating: "k", count: 101): "2026-03-23"]), body(["surgerydate": "2026-03-23"], hash: String(repeating: "zz", count: 32)),
                Array("{\"asOf\": 1}".utf8),
            ] {
                #expect(try await h.signed(.put, path, body: bad, as: .response).0 == .badRequest)
            }
            #expect(try await h.count("SELECT count(*)::int FROM participant_property_dates") == 0)
            // A good one is kept; one older than it, delivered late, changes nothing.
            let (kept, reply) = try await h.signed(.put, path, body: body(["surgerydate": "2026-03-23"], asOf: "2026-03-02T00:00:00.000Z"), as: .response)
            #expect(kept == .ok && reply["kept"] == .number(1))
            let (late, lateReply) = try await h.signed(.put, path, body: body(["surgerydate": "2026-01-01"]), as: .response)
            #expect(late == .ok && lateReply["kept"] == .number(0))
            #expect(try await h.count("SELECT count(*)::int FROM participant_property_dates WHERE dates->>'surgerydate' = '2026-03-23'") == 1)
        }
    }
}
