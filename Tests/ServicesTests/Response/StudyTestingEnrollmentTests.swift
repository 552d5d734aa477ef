import Foundation
import Logging
import PostgresNIO
import ResponseCore
import StudyModels
import Testing
import TestSupport

/// A study in testing takes only testers (tokens made while it is in testing), and what they
/// recorded goes when the study's event says it left testing; its real participants stay.
@Suite(.needsCluster) struct StudyTestingEnrollmentTests {
    func enroll(_ h: ResponseHarness, token: String?) async throws -> (Bool, String) {
        var query = ["studyId": "MYTESTSTUDY", "allowDataSharing": "true"]
        query["token"] = token
        let (status, body, _) = try await h.call("mobileappstudy-enroll.api", json: query)
        return (status == .ok, body["data"]?["appToken"]?.text ?? body.exception ?? "")
    }

    func count(_ h: ResponseHarness, _ query: PostgresQuery) async throws -> Int {
        try await h.postgres.query(query, logger: Logger(label: "test")).decode(Int.self).single()
    }

    @Test func onlyTestersJoinAndTheirDataGoesAtLaunch() async throws {
        try await ResponseHarness.run { h in
            let start = Date()
            #expect(try await h.studyEvent("MYTESTSTUDY", status: .preLaunch, version: 0, at: start) == .ok)
            let kept = try await h.tokens(1, study: "MYTESTSTUDY")[0]
            #expect(try await h.studyEvent("MYTESTSTUDY", status: .testing, version: 1, at: start.addingTimeInterval(1)) == .ok)
            let testers = try await h.tokens(2, study: "MYTESTSTUDY")

            // Nobody joins without a tester's token, not even with one kept for the real study.
            #expect(try await enroll(h, token: nil) == (false, Enrollment.testersOnly))
            #expect(try await enroll(h, token: kept) == (false, Enrollment.testersOnly))
            let (joined, appToken) = try await enroll(h, token: testers[0])
            #expect(joined)
            var envelope = try ResponseSubmissionTests.envelope(appToken: appToken)
            envelope["metadata"] = ["studyId": "MYTESTSTUDY", "activityId": "NewSurvey", "version": "1", "activityRunId": "1"]
            #expect(try await h.call("mobileappstudy-processResponse.api", json: envelope).0 == .ok)
            #expect(try await count(h, "SELECT count(*)::int FROM participants WHERE testing") == 1)
            #expect(try await count(h, "SELECT count(*)::int FROM responses") == 1)

            // Launch: the tester, their response and every tester's token are gone.
            #expect(try await h.studyEvent("MYTESTSTUDY", status: .active, version: 2, at: start.addingTimeInterval(2)) == .ok)
            #expect(try await count(h, "SELECT count(*)::int FROM participants") == 0)
            #expect(try await count(h, "SELECT count(*)::int FROM responses") == 0)
            #expect(try await count(h, "SELECT count(*)::int FROM token_batches WHERE testing") == 0)
            #expect(try await count(h, "SELECT count(*)::int FROM enrollment_tokens") == 1)
            #expect(try await count(
                h, "SELECT count(*)::int FROM audit_events WHERE action = 'study.test_data_removed' AND details->>'participants' = '1'")
                == 1)
            #expect(try await enroll(h, token: testers[1]) == (false, "Unknown token: '\(testers[1])'"))
            #expect(try await h.call("mobileappstudy-processResponse.api", json: envelope).0 != .ok)

            // The real study: the kept token joins, and a late or repeated event removes nothing.
            let (live, _) = try await enroll(h, token: kept)
            #expect(live)
            #expect(try await h.studyEvent("MYTESTSTUDY", status: .active, version: 2, at: start.addingTimeInterval(2)) == .ok)
            #expect(try await h.studyEvent("MYTESTSTUDY", status: .paused, version: 2, at: start.addingTimeInterval(3)) == .ok)
            #expect(try await count(h, "SELECT count(*)::int FROM participants") == 1)
        }
    }
}
