import Foundation
import HTTPTypes
import NIOCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `GET /internal/v1/studies/{id}/participants/{appTokenSHA256}/submissions`: the responses that
/// arrived from a participant, for registration only, with the time and offset the app wrote.
@Suite struct InternalSubmissionTests {
    func get(_ h: ResponseHarness, _ path: String, query: String, as caller: ServiceName = .registration) async throws
        -> (HTTPResponse.Status, ByteBuffer)
    {
        let headers = TestApplication.signedHeaders(caller: caller, to: .response, method: .get, path: path, query: query)
        return try await h.client.execute(uri: path + "?" + query, method: .get, headers: headers) { ($0.status, $0.body) }
    }

    @Test func registrationReadsAParticipantsSubmissionsAndNoOneElseDoes() async throws {
        try await ResponseHarness.run { h in
            #expect(try await h.studyEvent("SLEEPWELL") == .ok)
            let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            for (run, endTime) in [("1", "2026-03-20T21:00:00.000+1100"), ("2", "2999-01-01T00:00:00.000+0000"), ("", "not a time")] {
                var metadata: [String: Any] = ["activityId": "daily", "version": "1.0"]
                if !run.isEmpty { metadata["activityRunId"] = run }
                let (status, _, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: ["type": "SurveyResponse", "participantId": appToken, "metadata": metadata,
                           "data": ["endTime": endTime, "results": [] as [Any]]])
                #expect(status == .ok)
            }
            let path = InternalPaths.participantSubmissions(studyId: "SLEEPWELL", appTokenSHA256: SecureToken.hash(appToken))
            let (status, body) = try await get(h, path, query: "since=2026-01-01T00:00:00Z")
            try #require(status == .ok)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let submissions = try decoder.decode(ParticipantSubmissions.self, from: Data(buffer: body)).submissions
            try #require(submissions.count == 3)
            // Newest first; a time the app wrote after the response arrived, or one that does not
            // read, is not kept; the offset is in minutes.
            #expect(submissions.map(\.runId) == [nil, "2", "1"])
            #expect(submissions[2].finishedAt == ISO8601DateFormatter().date(from: "2026-03-20T10:00:00Z"))
            #expect(submissions[2].offsetMinutes == 660)
            #expect(submissions[0].finishedAt == nil && submissions[1].finishedAt == nil && submissions[1].offsetMinutes == nil)

            // Nothing since later, and nothing for a participant the study does not know.
            #expect(try await get(h, path, query: "since=2999-01-01T00:00:00Z").1.readableBytes < 20)
            let stranger = InternalPaths.participantSubmissions(studyId: "SLEEPWELL", appTokenSHA256: String(repeating: "a", count: 64))
            #expect(try decoder.decode(ParticipantSubmissions.self, from: Data(buffer: try await get(h, stranger, query: "since=2026-01-01T00:00:00Z").1)).submissions.isEmpty)
            // Another caller, a malformed participant or instant, an unknown study: refused.
            #expect(try await get(h, path, query: "since=2026-01-01T00:00:00Z", as: .studyMetadata).0 == .forbidden)
            let malformed = InternalPaths.participantSubmissions(studyId: "SLEEPWELL", appTokenSHA256: "not-a-hash")
            #expect(try await get(h, malformed, query: "since=2026-01-01T00:00:00Z").0 == .badRequest)
            #expect(try await get(h, path, query: "since=yesterday").0 == .badRequest)
            let unknown = InternalPaths.participantSubmissions(studyId: "NOSUCHSTUDY", appTokenSHA256: SecureToken.hash(appToken))
            #expect(try await get(h, unknown, query: "since=2026-01-01T00:00:00Z").0 == .notFound)
        }
    }
}
