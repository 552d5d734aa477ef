import Foundation
import InternalContracts
import HTTPTypes
import ServiceKit
import Logging
import StudyModels
import Testing
import TestSupport

/// When study-metadata says a study's test run ended, what testers left here goes; whoever
/// joined after that moment stays, however late or often the word arrives.
@Suite(.needsCluster) struct RegistrationTestRunTests {
    func ended(_ h: RegistrationHarness, at: Date, studyId: String = "S1", path: String? = nil, as caller: ServiceName = .studyMetadata)
        async throws -> (HTTPResponse.Status, JSONObject)
    {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let body = Array(try encoder.encode(StudyTestingEnded(studyId: studyId, endedAt: at)))
        return try await h.signed(.post, path ?? (try InternalCalls.testingEnded.path(["studyId": "S1"])), body: body, as: caller)
    }

    @Test func testersStatesAndConsentsGoAndLaterParticipantsStay() async throws {
        try await RegistrationHarness.run { h in
            let tester = try await h.signUp("tester@example.org")
            let other = try await h.signUp("tester2@example.org")
            try await h.join(tester, status: "inProgress")
            try await h.join(other, status: "inProgress")
            try await h.join(other, status: "inProgress", studyId: "S2")
            try await h.sql(
                """
                INSERT INTO consent_records (user_id, app_id, study_id, version, status)
                VALUES (\(UUID(uuidString: tester.userId)!), 'DEMOAPP', 'S1', '1.0', 'completed')
                """)
            // The end travels as ISO 8601 in whole seconds: taken once the second the testers'
            // rows were written in is over, it is after every one of them whatever the clock.
            let written = Date().timeIntervalSince1970.rounded(.down)
            let endedAt = try await eventually("the second the testers' rows were written in is over") {
                Date().timeIntervalSince1970.rounded(.down) > written ? Date() : nil
            }

            // Only study-metadata may say so, and only of the study in the path.
            #expect(try await ended(h, at: endedAt, as: .response).0 == .forbidden)
            #expect(try await ended(h, at: endedAt, studyId: "S2").0 == .badRequest)
            #expect(try await h.count("SELECT count(*)::int FROM participant_studies WHERE study_id = 'S1'") == 2)

            let (status, removed) = try await ended(h, at: endedAt)
            #expect(status == .ok)
            #expect(removed["studyStates"] == .number(2))
            #expect(removed["consents"] == .number(1))
            #expect(try await h.count("SELECT count(*)::int FROM participant_studies WHERE study_id = 'S1'") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM consent_records") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM participant_studies WHERE study_id = 'S2'") == 1, "another study")
            #expect(try await h.count("SELECT count(*)::int FROM audit_events WHERE action = 'study.test_data_removed'") == 1)

            // A real participant joins after launch; the same word again removes nothing.
            let real = try await h.signUp("real@example.org")
            try await h.join(real, status: "inProgress")
            #expect(try await ended(h, at: endedAt).1["studyStates"] == .number(0))
            #expect(try await h.count("SELECT count(*)::int FROM participant_studies WHERE study_id = 'S1'") == 1)
        }
    }
}
