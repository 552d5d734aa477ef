import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Every design and response pair of the conformance data, submitted through the real HTTP API
/// and processed into the study's tables. The designs are put
/// where the design source keeps what it fetched from study-metadata; fetching itself is tested
/// against a running study-metadata below.
@Suite(.needsCluster) struct ResponseProcessingTests {
    let fixture = ProcessingFixture()

    @Test func everyConformancePairIsIngested() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent(ProcessingFixture.study)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": ProcessingFixture.study, "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            var outcome: [String: (String, String?)] = [:]
            for (activity, version) in ProcessingFixture.pairs {
                let id = try await fixture.submit(h, appToken: appToken, activity: activity, version: version)
                outcome["\(activity)_\(version)"] = try await fixture.settled(h, id)
            }
            // Every pair is stored but two: the empty design, refused with the original's words, and
            // version 11, whose design (malformed) is not here and cannot be fetched: it waits,
            // without holding up the responses behind it.
            for (activity, version) in ProcessingFixture.pairs {
                let (status, error) = try #require(outcome["\(activity)_\(version)"])
                switch (activity, version) {
                case ("empty", _):
                    #expect(status == "error")
                    #expect(error == "Design document does not contain all the required fields (activityId, steps)")
                case ("NewSurvey", "11"):
                    #expect(status == "pending")
                    // The reason it waits names the activity, not the internal address asked.
                    #expect(error == "The design of activity 'NewSurvey' at version '11' cannot be read now")
                default:
                    #expect(status == "processed", "\(activity) \(version): \(error ?? "")")
                }
            }

            // /metrics counts the outcomes, and the one response that waits is the backlog.
            let processed = outcome.values.filter { $0.0 == "processed" }.count
            try await h.client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text.contains(#"studystack_queue_items_total{queue="responses",outcome="processed"} \#(processed)"#))
                #expect(text.contains(#"studystack_queue_items_total{queue="responses",outcome="rejected"} 1"#))
                #expect(text.contains(#"studystack_queue_items_total{queue="responses",outcome="retry"}"#))
                #expect(text.contains(#"studystack_queue_last_round_timestamp_seconds{queue="responses"}"#))
                #expect(text.contains(#"studystack_queue_depth{queue="responses"} 1"#))
                #expect(!text.contains(#"studystack_queue_oldest_seconds{queue="responses"} 0\#n"#))
            }

            // What version 1's response became, value by value.
            let survey = try await fixture.rows(h, "NewSurvey")
            #expect(survey.count == 11)  // versions 1-10 and 13 write to NewSurvey; 11 waits
            let first = try #require(survey.first)
            #expect(first["ScaleField"] == .number(1.1))
            #expect(first["ContinusousScaleField"] == .number(400.3))
            #expect(first["IntegerField"] == .number(1))
            #expect(first["DoubleField"] == .number(1.01))
            #expect(first["DateTimeField"]?.text?.hasPrefix("2017-02-13T15:15:00") == true)
            #expect(first["DateField"]?.text?.hasPrefix("2017-02-13T00:00:00") == true)
            #expect(first["BooleanField"] == .bool(true))
            #expect(first["TextScaleField"] == .string("Text Scale value v1"))
            #expect(first["TimeOfDayField"] == .string("15:15:01"))
            #expect(first["ShortTextField"] == .string("v1_defghijklmnopqrstuvwxyz"))
            #expect(first["LocationField"] == .string("(47.6061\u{00B0} N, 122.3321\u{00B0} W)"))
            #expect(first["ParticipantId"] != nil)
            let key = try #require(first["Key"])
            let choices = try await fixture.rows(h, "NewSurveyTextChoiceField").filter { $0["NewSurveyId"] == key }
            #expect(choices.compactMap { $0["TextChoiceField"]?.text } == ["Survey", "Version1"])
            let groups = try await fixture.rows(h, "NewSurveyGroupedList").filter { $0["NewSurveyId"] == key }
            #expect(groups.count == 1)
            let groupKey = try #require(groups.first?["Key"])
            #expect(try await fixture.rows(h, "NewSurveyGroupedListTextChoiceField").filter { $0["NewSurveyGroupedListId"] == groupKey }
                .compactMap { $0["TextChoiceField"]?.text } == ["Version", "1 grouped"])
            #expect(try await fixture.rows(h, "NewSurveyGroupedListSubGroupedList").filter { $0["NewSurveyGroupedListId"] == groupKey }.count == 1)

            // Active tasks and "other" choices.
            let kicks = try await fixture.rows(h, "FKC-74counter")
            #expect(kicks.count == 1)
            #expect(kicks.first?["duration"] == .number(200))
            #expect(kicks.first?["count"] == .number(33))
            let other = try await fixture.rows(h, "OtherOptionOptionRequired")
            #expect(other.compactMap { $0["OptionRequired"]?.text }.sorted() == ["I has other", "other choice name"])
            #expect(other.compactMap { $0["OptionRequired_Other_Text"]?.text } == ["The other text value"])

            // Each answer's timing is kept.
            let timings = try await h.postgres.query(
                "SELECT count(*)::int FROM response_metadata WHERE list_name = 'NewSurvey'", logger: Logger(label: "test"))
            #expect((try await timings.decode(Int.self).single()) > 0)
        }
    }

    /// A response whose design can never be had (study-metadata keeps failing for it) is not
    /// tried for ever: its last allowed attempt makes it an `error` that says so, for the triage.
    @Test func aResponseWhoseDesignNeverComesIsGivenUpAfterItsLastAttempt() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent(ProcessingFixture.study)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": ProcessingFixture.study, "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let id = try await fixture.submit(h, appToken: appToken, activity: "NewSurvey", version: "11")
            let (waiting, _) = try await fixture.settled(h, id)
            #expect(waiting == "pending", "the first failures wait")
            // As if it had already failed every attempt but one: the next claim is its last.
            try await h.sql(
                "UPDATE responses SET attempts = \(ResponseProcessor.maxAttempts - 1), next_attempt_at = now() WHERE id = \(id)")
            let (status, error) = try await eventually("the response given up", within: .seconds(30), poll: .milliseconds(50)) {
                let settled = try await fixture.settled(h, id)
                return settled.0 == "pending" ? nil : settled
            }
            #expect(status == "error")
            #expect(error == "Given up after \(ResponseProcessor.maxAttempts) attempts; reprocess it once this is mended: "
                + "The design of activity 'NewSurvey' at version '11' cannot be read now")
            #expect(try await fixture.count(h, "SELECT attempts FROM responses WHERE id = \(id)") == ResponseProcessor.maxAttempts)
        }
    }

    @Test func rejectedResponsesGetTheOriginalsMessagesAndStoreNothing() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent(ProcessingFixture.study)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": ProcessingFixture.study, "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            // Version 1 first, so the lists exist.
            #expect(try await fixture.settled(h, try await fixture.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")).0 == "processed")
            let before = try await fixture.rows(h, "NewSurvey").count

            func result(_ type: String, _ key: String, _ value: Any) -> [String: Any] {
                ["resultType": type, "key": key, "value": value, "skipped": false]
            }
            let cases: [([[String: Any]], String)] = [
                ([result("scale", "ScaleField", "high")],
                 "Value type for field 'ScaleField' expected to be Integer or Float but got class java.lang.String"),
                ([result("numeric", "IntegerField", 5_000_000_000)],
                 "Value type for field 'IntegerField' expected to be Integer or Float but got class java.lang.Long"),
                ([result("boolean", "BooleanField", 1)],
                 "Value type for field 'BooleanField' expected to be Boolean but got class java.lang.Integer"),
                ([result("date", "DateField", "2017-02-13T15:15:00Z")],
                 "Invalid date string format for field 'DateField' (2017-02-13T15:15:00Z)"),
                ([result("date", "DateField", true)],
                 "Value type for Date field 'DateField' expected to be String but got class java.lang.Boolean"),
                ([result("text", "ShortTextField", 3.5)],
                 "Value type for field 'ShortTextField' expected to be String but got class java.lang.Double"),
                ([result("textChoice", "TextChoiceField", "one")],
                 "Value type for choice field 'TextChoiceField' expected to be ArrayList but got class java.lang.String"),
                ([result("scale", "NoSuchField", 1)], "Unable to find column 'NoSuchField' in list 'NewSurvey'"),
                ([result("boolean", "ScaleField", true)],
                 "Type 'boolean' (BOOLEAN) of result 'ScaleField' does not match expected type (DOUBLE)"),
                ([result("grouped", "GroupedList", "x")],
                 "Value type for grouped result field 'GroupedList' expected to be ArrayList but got class java.lang.String"),
                // A fault deep in a form rolls back the whole response.
                ([result("scale", "ScaleField", 2), result("grouped", "GroupedList", [[result("scale", "ScaleField", "deep")]])],
                 "Value type for field 'ScaleField' expected to be Integer or Float but got class java.lang.String"),
            ]
            for (index, (results, message)) in cases.enumerated() {
                let (status, _, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: ["participantId": appToken, "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": "\(index)"],
                           "data": ["results": results]])
                #expect(status == .ok)
                let (state, error) = try await fixture.settled(h, try await fixture.latest(h))
                #expect(state == "error")
                #expect(error == "Problem storing data in list 'NewSurvey' in container '\(ProcessingFixture.study)'.\n\(message)")
            }
            #expect(try await fixture.rows(h, "NewSurvey").count == before)
            // No results at all.
            _ = try await h.call(
                "mobileappstudy-processResponse.api",
                json: ["participantId": appToken, "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": "x"],
                       "data": ["startTime": "2016-09-06T15:48:13.123+0000"]])
            let (_, error) = try await fixture.settled(h, try await fixture.latest(h))
            #expect(error == "Problem storing data in list 'NewSurvey' in container '\(ProcessingFixture.study)'.\nNo results provided in response.")
        }
    }
}
