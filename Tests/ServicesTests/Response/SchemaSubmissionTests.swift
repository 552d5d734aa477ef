import Foundation
import ResponseCore
import StudyModels
import Testing

/// The schema app's data POSTs as its WebView sends them: a survey's answers and a page log read
/// from their fields, a replay recognised by its key, and what no retry can mend refused with the
/// field at fault.
@Suite struct SchemaSubmissionTests {
    /// A survey response as the app sends it, in its field order (values as strings, `responses`
    /// a JSON text).
    static let survey: [(name: String, value: String)] = [
        ("data_type", "survey_response"), ("user_id", "ABD2345Z"), ("study_id", "3ZDOGAH"), ("module_index", "1"),
        ("module_name", "Elements"),
        ("responses", #"{"slider-0yih1evt": 63, "multi-q8bohlar": "banana", "text-1": "", "checks": "a;b;"}"#),
        ("response_time", "2024-04-06T09:41:02+11:00"), ("response_time_in_ms", "1712356862000"),
        ("alert_time", "2024-04-06T09:36:00+11:00"), ("platform", "iphone"),
    ]
    static let log: [(name: String, value: String)] = [
        ("data_type", "log"), ("user_id", "ABD2345Z"), ("study_id", "3ZDOGAH"), ("module_index", "-1"), ("page", "home"),
        ("event", "entry"), ("timestamp", "2024-04-06T09:40:00+11:00"), ("timestamp_in_ms", "1712356800000"), ("platform", "android"),
    ]

    static func replacing(_ pairs: [(name: String, value: String)], _ name: String, with value: String?) -> [(name: String, value: String)] {
        pairs.compactMap { $0.name == name ? value.map { (name, $0) } : $0 }
    }

    @Test func aSurveyResponseIsReadWithEveryFieldKept() throws {
        let submission = try SchemaSubmission.parse(Self.survey)
        #expect(submission.kind == .surveyResponse)
        #expect(submission.userId == "ABD2345Z" && submission.studyId == "3ZDOGAH" && submission.moduleIndex == 1)
        #expect(submission.responses?["slider-0yih1evt"] == .number(63))
        #expect(submission.responses?["checks"] == .string("a;b;"))
        #expect(submission.fields.count == Self.survey.count)
        #expect(submission.fields["platform"] == "iphone" && submission.fields["response_time_in_ms"] == "1712356862000")
        #expect(submission.dedupKey.count == 64)
    }

    @Test func theSamePostSentAgainHasTheSameKeyAndAnotherTaskAnother() throws {
        let first = try SchemaSubmission.parse(Self.survey)
        // The same answers with other spacing in the JSON text are the same submission.
        let respaced = Self.replacing(
            Self.survey, "responses", with: #"{"checks":"a;b;","text-1":"","multi-q8bohlar":"banana","slider-0yih1evt":63}"#)
        #expect(try SchemaSubmission.parse(respaced).dedupKey == first.dedupKey)
        #expect(try SchemaSubmission.parse(Self.replacing(Self.survey, "alert_time", with: "2024-04-06T12:04:00+11:00")).dedupKey != first.dedupKey)
        #expect(try SchemaSubmission.parse(Self.replacing(Self.survey, "user_id", with: "XYZ2345A")).dedupKey != first.dedupKey)
        let log = try SchemaSubmission.parse(Self.log)
        #expect(log.kind == .log && log.moduleIndex == -1 && log.responses == nil)
        #expect(try SchemaSubmission.parse(Self.log).dedupKey == log.dedupKey)
        #expect(try SchemaSubmission.parse(Self.replacing(Self.log, "event", with: "exit")).dedupKey != log.dedupKey)
    }

    @Test(arguments: [
        ("data_type", "answers", "data_type"),
        ("user_id", "", "user_id"),
        ("user_id", String(repeating: "A", count: 65), "user_id"),
        ("user_id", "AB\u{7}C", "user_id"),
        ("study_id", nil, "study_id"),
        ("module_index", "-1", "module_index"),
        ("module_index", "one", "module_index"),
        ("responses", "[1, 2]", "responses"),
        ("responses", "{not json", "responses"),
        ("alert_time", nil, "alert_time"),
        ("response_time", "", "response_time"),
        ("response_time_in_ms", "soon", "response_time_in_ms"),
    ] as [(String, String?, String)])
    func whatNoRetryCanMendIsRefusedWithItsField(field: String, value: String?, expected: String) {
        #expect(throws: SchemaSubmission.Problem.self) { try SchemaSubmission.parse(Self.replacing(Self.survey, field, with: value)) }
        do {
            _ = try SchemaSubmission.parse(Self.replacing(Self.survey, field, with: value))
        } catch {
            #expect(error.field == expected, "\(error.message)")
        }
    }

    @Test func aRepeatedFieldOrAFloodOfFieldsIsRefused() {
        #expect(throws: SchemaSubmission.Problem(field: "user_id", message: "user_id is given more than once")) {
            try SchemaSubmission.parse(Self.survey + [("user_id", "OTHER")])
        }
        let flood = Self.survey + (0..<30).map { ("extra\($0)", "x") }
        #expect(throws: SchemaSubmission.Problem.self) { try SchemaSubmission.parse(flood) }
        // A log without its page is refused; its module_index may be -1.
        #expect(throws: SchemaSubmission.Problem(field: "page", message: "page is required")) {
            try SchemaSubmission.parse(Self.replacing(Self.log, "page", with: nil))
        }
    }
}
