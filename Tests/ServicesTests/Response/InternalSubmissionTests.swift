import Foundation
import InternalContracts
import HTTPTypes
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `GET /internal/v1/submissions?after=`: the responses stored, by id, for registration only, with
/// the time and offset the app wrote; the position a page gives moves only over responses old
/// enough that no smaller id can still commit.
@Suite(.needsCluster) struct InternalSubmissionTests {
    func get(_ h: ResponseHarness, after: String, as caller: ServiceName = .registration) async throws -> (HTTPResponse.Status, ByteBuffer) {
        let path = InternalCalls.submissionFeed.template
        let query = "after=" + after
        let headers = TestApplication.signedHeaders(caller: caller, to: .response, method: .get, path: path, query: query)
        return try await h.client.execute(uri: path + "?" + query, method: .get, headers: headers) { ($0.status, $0.body) }
    }

    func page(_ h: ResponseHarness, after: Int64) async throws -> SubmissionFeed {
        let (status, body) = try await get(h, after: String(after))
        try #require(status == .ok, "\(String(buffer: body))")
        return try JSONDecoder().decode(SubmissionFeed.self, from: Data(buffer: body))
    }

    @Test func registrationReadsTheStoredResponsesPageByPageAndNoOneElseDoes() async throws {
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
            // A response of a participant without an app token (the schema app's) is read past,
            // not listed.
            try await h.sql(
                """
                INSERT INTO participants (study_key, status, allow_data_sharing) VALUES ('SLEEPWELL', 'enrolled', 'NA');
                """)
            try await h.sql(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint)
                SELECT max(id), 'SLEEPWELL', 'daily', '1.0', '{}', '{}', 'schema-row' FROM participants WHERE app_token_hash IS NULL
                """)

            let first = try await page(h, after: 0)
            try #require(first.submissions.count == 3)
            // In the order stored; a time the app wrote after the response arrived, or one that
            // does not read, is not kept; the offset is in minutes.
            #expect(first.submissions.map(\.runId) == ["1", "2", nil])
            #expect(first.submissions.allSatisfy { $0.studyId == "SLEEPWELL" && $0.participantTokenSHA256 == SecureToken.hash(appToken) })
            #expect(first.submissions[0].finishedAt == ISO8601DateFormatter().date(from: "2026-03-20T10:00:00Z"))
            #expect(first.submissions[0].offsetMinutes == 660)
            #expect(first.submissions[1].finishedAt == nil && first.submissions[2].finishedAt == nil && first.submissions[1].offsetMinutes == nil)
            // Arrival times keep their fraction of a second: a response in the second its
            // participant enrolled is after the instant they did.
            let stored = try await h.postgres.query(
                "SELECT received_at FROM responses WHERE id = \(first.submissions[0].responseId)", logger: .init(label: "test")
            ).collect().map { try $0.decode(Date.self) }
            #expect(abs(try #require(stored.first).timeIntervalSince(first.submissions[0].receivedAt)) < 0.001)
            // All four arrived just now: the position does not move past any of them yet.
            #expect(first.settledThrough == 0)

            // Once the first two have been stored a while, the position moves past them, and
            // the next page starts after them.
            let ids = first.submissions.map(\.responseId)
            try await h.sql("UPDATE responses SET received_at = now() - interval '2 minutes' WHERE id <= \(ids[1])")
            #expect(try await page(h, after: 0).settledThrough == ids[1])
            let second = try await page(h, after: ids[1])
            #expect(second.submissions.map(\.responseId) == [ids[2]])
            try await h.sql("UPDATE responses SET received_at = now() - interval '2 minutes'")
            let last = try await page(h, after: ids[1])
            #expect(last.settledThrough > ids[2], "the schema app's response is read past")
            #expect(try await page(h, after: last.settledThrough) == SubmissionFeed(submissions: [], settledThrough: last.settledThrough))

            // Another caller, or a position that is no response id: refused.
            #expect(try await get(h, after: "0", as: .studyMetadata).0 == .forbidden)
            for bad in ["", "-1", "abc", "1e3", String(repeating: "9", count: 19), "%2B5"] {
                #expect(try await get(h, after: bad).0 == .badRequest, "\(bad)")
            }
        }
    }
}
