import Foundation
import ResponseCore
import StudyModels
import Testing

/// `DateAnswers`: what the feed says a response answered with dates, read from the results
/// PostgreSQL's `$.results.**` found (forms included), within bounds whatever the phone sent.
@Suite struct DateAnswersTests {
    static func result(_ key: String, _ value: JSONValue, skipped: Bool = false) -> JSONValue {
        .object(["resultType": .string("date"), "key": .string(key), "value": value, "skipped": .bool(skipped)])
    }

    @Test func answeredDatesAreKeptByKeyAsWrittenAndTheRestIsNot() {
        let found = JSONValue.array([
            Self.result("diagnosisDate", .string("2026-03-01T00:00:00.000+1100")),
            Self.result("visit", .string("2026-04-02")),
            Self.result("skippedOne", .string("2026-04-03"), skipped: true),
            Self.result("notADate", .string("2026-02-30")),
            Self.result("aNumber", .number(20_260_301)),
            Self.result("", .string("2026-04-03")),
            Self.result(String(repeating: "k", count: 101), .string("2026-04-03")),
            // A later answer to the same key (a form's) wins.
            Self.result("visit", .string("2026-04-09T08:00:00.000-0400")),
        ])
        #expect(DateAnswers.from(found) == ["diagnosisDate": "2026-03-01", "visit": "2026-04-09"])
        #expect(DateAnswers.from(.array([])) == nil)
        #expect(DateAnswers.from(.object([:])) == nil)
    }

    @Test func aResponseOfThousandsOfDatesGivesAtMostTwenty() {
        let many = JSONValue.array((0..<5_000).map { Self.result("d\($0)", .string("2026-03-01")) })
        let answers = DateAnswers.from(many)
        #expect(answers?.count == SubmissionFeed.Submission.maxDateAnswers)
        #expect(answers?["d0"] == "2026-03-01" && answers?["d19"] == "2026-03-01" && answers?["d20"] == nil)
    }
}
