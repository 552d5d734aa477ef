import Foundation
import InternalContracts
import HTTPTypes
import JSONText
import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The storage rehearsal study-metadata asks for before it freezes a version: a response to each
/// design goes through the code real responses go through, against the study's real tables, and
/// nothing of it stays.
@Suite(.needsCluster) struct StorageRehearsalTests {
    static let study = "REHEARSED"

    /// A design as study-metadata serves it, with `steps` (JSON text).
    static func design(_ activityId: String, _ steps: String) -> String {
        #"{"message": "SUCCESS", "activity": {"type": "questionnaire", "metadata": {"studyId": "\#(study)", "activityId": "\#(activityId)", "name": "\#(activityId)", "version": "1.0", "startDate": "", "endDate": ""}, "steps": [\#(steps)]}}"#
    }

    /// Every kind of step the designer offers, as a coordinator completes them.
    static let everyStep = """
        {"type": "instruction", "key": "intro", "resultType": "", "title": "Hello"},
        {"type": "question", "key": "sleep", "resultType": "scale", "format": {"minValue": 0, "maxValue": 10}},
        {"type": "question", "key": "energy", "resultType": "continuousScale", "format": {"minValue": 0, "maxValue": 1}},
        {"type": "question", "key": "mood", "resultType": "textScale", "format": {"textChoices": [{"text": "Low", "value": "low"}]}},
        {"type": "question", "key": "naps", "resultType": "valuePicker", "format": {"textChoices": [{"text": "1", "value": "1"}]}},
        {"type": "question", "key": "weather", "resultType": "imageChoice", "format": {"imageChoices": [{"text": "Sun", "value": "sun"}]}},
        {"type": "question", "key": "caffeine", "resultType": "boolean"},
        {"type": "question", "key": "cups", "resultType": "numeric", "format": {"style": "Integer"}},
        {"type": "question", "key": "weight", "resultType": "numeric", "format": {"style": "Decimal"}},
        {"type": "question", "key": "did", "resultType": "textChoice", "format": {"selectionStyle": "Multiple", "textChoices": [{"text": "Read", "value": "read"}, {"text": "Other", "value": "other", "other": {"textfieldReq": true}}]}},
        {"type": "question", "key": "bedtime", "resultType": "timeOfDay"},
        {"type": "question", "key": "lastDrink", "resultType": "date", "format": {"style": "Date-Time"}},
        {"type": "question", "key": "born", "resultType": "date", "format": {"style": "Date"}},
        {"type": "question", "key": "notes", "resultType": "text", "format": {"maxLength": 500}},
        {"type": "question", "key": "email", "resultType": "email"},
        {"type": "question", "key": "wait", "resultType": "timeInterval"},
        {"type": "question", "key": "height", "resultType": "height"},
        {"type": "question", "key": "place", "resultType": "location"},
        {"type": "form", "key": "symptoms", "resultType": "grouped", "steps": [
            {"type": "question", "key": "symptom", "resultType": "text"},
            {"type": "question", "key": "severity", "resultType": "scale", "format": {"minValue": 0, "maxValue": 5}}]},
        {"type": "task", "key": "kicks", "resultType": "fetalKickCounter"},
        {"type": "task", "key": "span", "resultType": "spatialSpanMemory"},
        {"type": "task", "key": "hanoi", "resultType": "towerOfHanoi"}
        """

    func rehearse(_ h: ResponseHarness, _ designs: [String], caller: ServiceName = .studyMetadata) async throws
        -> (HTTPResponse.Status, StorageRehearsalReply?)
    {
        let path = try InternalCalls.storageRehearsals.path(["studyId": Self.study])
        let body = Array(#"{"designs": [\#(designs.joined(separator: ","))]}"#.utf8)
        var headers = TestApplication.signedHeaders(caller: caller, to: .response, method: .post, path: path, body: body)
        headers[.contentType] = "application/json"
        return try await h.client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body)) {
            ($0.status, try? JSONDecoder().decode(StorageRehearsalReply.self, from: Data(buffer: $0.body)))
        }
    }

    /// How many rows the rehearsal could have left: the study, its schema, its lists, its
    /// participants and responses, and its answers' timing rows.
    func traces(_ h: ResponseHarness) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["studies", "study_schemas", "response_lists", "participants", "responses", "response_metadata"] {
            for try await count in try await h.postgres.query(
                PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)"), logger: Logger(label: "test")
            ).decode(Int.self) { counts.append(count) }
        }
        return counts
    }

    @Test func aResponseToEveryKindOfStepIsStoredAndNothingOfItStays() async throws {
        try await ResponseHarness.run { h in
            let (status, reply) = try await rehearse(h, [Self.design("Daily", Self.everyStep)])
            #expect(status == .ok)
            #expect(reply?.problems == [])
            #expect(try await traces(h) == [0, 0, 0, 0, 0, 0], "the study was never published: nothing of it is kept")
        }
    }

    /// The issue's case, and the other step a coordinator can leave without what storing needs:
    /// each named with its activity and step, every activity rehearsed.
    @Test func incompleteQuestionsAreNamedWithTheirStep() async throws {
        try await ResponseHarness.run { h in
            let (status, reply) = try await rehearse(h, [
                Self.design("Daily", #"{"type": "question", "key": "lastDrink", "resultType": "date", "format": {}}"#),
                Self.design("Weekly", #"{"type": "question", "key": "cups", "resultType": "numeric"}"#),
                Self.design("Monthly", #"{"type": "form", "key": "visits", "resultType": "grouped", "steps": [{"type": "question", "key": "when", "resultType": "date"}]}"#),
                Self.design("Fine", #"{"type": "question", "key": "ok", "resultType": "boolean"}"#),
            ])
            #expect(status == .ok)
            let problems = try #require(reply?.problems)
            try #require(problems.count == 3)
            #expect(problems[0] == StorageProblem(
                activityId: "Daily", stepKey: "lastDrink",
                message: "Unable to apply changes: the date question 'lastDrink' has no kind (Date, or Date and time)"))
            #expect(problems[1] == StorageProblem(
                activityId: "Weekly", stepKey: "cups",
                message: "Unable to apply changes: the number question 'cups' has no style (Integer or Decimal)"))
            #expect(problems[2].activityId == "Monthly")
            #expect(problems[2].stepKey == "when")
        }
    }

    /// What only the study's real tables can refuse: a question whose answers were stored as text
    /// asked again as a number. The tables are as the earlier version left them afterwards.
    @Test func aDesignTheStudysTablesCannotHoldIsRefused() async throws {
        try await ResponseHarness.run { h in
            #expect(try await h.studyEvent(Self.study) == .ok)
            let tables = StudyTables(client: h.postgres, access: h.access, logger: Logger(label: "test"))
            try await tables.apply(
                try SurveySchema.derive(fromDesign: Data(Self.design("Daily", #"{"type": "question", "key": "hours", "resultType": "text"}"#).utf8)),
                studyKey: Self.study)
            let (status, reply) = try await rehearse(
                h, [Self.design("Daily", #"{"type": "question", "key": "hours", "resultType": "numeric", "format": {"style": "Decimal"}}"#)])
            #expect(status == .ok)
            #expect(reply?.problems == [
                StorageProblem(activityId: "Daily", stepKey: "hours", message: "Can not change question result types. Field: hours")
            ])
            let lists = try await h.postgres.withConnection { try await tables.lists(studyKey: Self.study, on: $0).lists }
            #expect(lists["daily"]?.columns["hours"]?.storage == "VARCHAR")
            #expect(try await traces(h) == [1, 1, 1, 0, 0, 0])
        }
    }

    /// An activity imported from a Sage assessment, as study-metadata serves it: its design's
    /// steps beside the assessment, whose questions name the tables' columns by path.
    static func sageDesign(_ activityId: String, _ assessmentSteps: String) -> String {
        #"{"message": "SUCCESS", "activity": {"type": "questionnaire", "metadata": {"studyId": "\#(study)", "activityId": "\#(activityId)", "name": "\#(activityId)", "version": "1.0", "startDate": "", "endDate": ""}, "steps": []}, "assessment": {"type": "assessment", "identifier": "\#(activityId)", "steps": [\#(assessmentSteps)]}}"#
    }

    /// Every input a Sage question takes, in a section and outside one, and choices with "other".
    static let everySageQuestion = """
        {"type": "overview", "identifier": "overview", "title": "Hello"},
        {"type": "simpleQuestion", "identifier": "count", "inputItem": {"type": "integer", "formatOptions": {"minimumValue": 0, "maximumValue": 100}}},
        {"type": "simpleQuestion", "identifier": "share", "inputItem": {"type": "number"}},
        {"type": "simpleQuestion", "identifier": "born", "inputItem": {"type": "year", "formatOptions": {"maximumYear": 2020}}},
        {"type": "simpleQuestion", "identifier": "slept", "inputItem": {"type": "duration"}},
        {"type": "simpleQuestion", "identifier": "note", "inputItem": {"type": "string", "characterLimit": 40}},
        {"type": "simpleQuestion", "identifier": "when", "inputItem": {"type": "date"}},
        {"type": "section", "identifier": "mood", "steps": [
            {"type": "choiceQuestion", "identifier": "feel", "baseType": "integer", "singleChoice": true, "choices": [{"value": 1, "text": "Low"}, {"value": 2, "text": "High"}]},
            {"type": "choiceQuestion", "identifier": "did", "baseType": "string", "singleChoice": false, "choices": [{"value": "read", "text": "Read"}, {"value": "walk", "text": "Walk"}], "other": {"type": "string"}}]}
        """

    /// A Sage activity's answers are made up as Sage's archives carry them and go through the
    /// same processing: every kind of question is stored, and a question whose answers the tables
    /// refuse (an integer past 32 bits is a Java long, which the original refused for a number
    /// column) is named.
    @Test func aSageAssessmentsAnswersAreRehearsedByTheirPaths() async throws {
        let answers = try #require(SyntheticResponse.data(forAssessment: try JSONValue.parse(
            Array(#"{"steps": [\#(Self.everySageQuestion)]}"#.utf8), budget: .activityDocument))[SageAnswers.member]?.array)
        try #require(answers.count == 8, "every question, none for the overview")
        #expect(answers.compactMap { $0["path"]?.string } == ["count", "share", "born", "slept", "note", "when", "mood/feel", "mood/did"])
        #expect(answers[0]["value"] == .number(100))
        #expect(answers[4]["value"]?.string?.count == 40)
        #expect(answers[6]["value"] == .array([.number(1)]))
        #expect(answers[7]["value"]?.array?.count == 3, "both choices and a free answer")

        try await ResponseHarness.run { h in
            let (status, reply) = try await rehearse(h, [
                Self.sageDesign("SageDaily", Self.everySageQuestion),
                Self.sageDesign("SageSteps", #"{"type": "simpleQuestion", "identifier": "steps", "inputItem": {"type": "integer", "formatOptions": {"maximumValue": 5000000000}}}"#),
            ])
            #expect(status == .ok)
            let problems = try #require(reply?.problems)
            try #require(problems.count == 1, "\(problems)")
            #expect(problems[0].activityId == "SageSteps")
            #expect(problems[0].message.contains("'steps' expected to be Integer or Float but got class java.lang.Long"), "\(problems[0].message)")
            #expect(try await traces(h) == [0, 0, 0, 0, 0, 0])
        }
    }

    /// What the document's bounds allow and PostgreSQL cannot hold: an activity of 1,700 questions
    /// is a table past 1,600 columns, and one of 1,100 number questions a row past a page (each
    /// number is 8 bytes that cannot be moved out of line). Each is named, not a failure of the
    /// call, so the study is refused at publishing instead of every response failing.
    @Test func anActivityTooWideForOneTableIsNamed() async throws {
        let flags = (0..<1_700).map { #"{"type": "question", "key": "f\#($0)", "resultType": "boolean"}"# }.joined(separator: ",")
        let numbers = (0..<1_100).map {
            #"{"type": "question", "key": "n\#($0)", "resultType": "numeric", "format": {"style": "Decimal"}}"#
        }.joined(separator: ",")
        try await ResponseHarness.run { h in
            let (status, reply) = try await rehearse(h, [Self.design("Flags", flags), Self.design("Numbers", numbers), Self.design("Fine", Self.everyStep)])
            #expect(status == .ok)
            let problems = try #require(reply?.problems)
            try #require(problems.count == 2, "\(problems)")
            #expect(problems[0].activityId == "Flags")
            #expect(problems[0].message.contains("at most 1600 columns"), "\(problems[0].message)")
            #expect(problems[1].activityId == "Numbers")
            #expect(problems[1].message.contains("row is too big"), "\(problems[1].message)")
            #expect(try await traces(h) == [0, 0, 0, 0, 0, 0])
        }
    }

    /// Only study-metadata asks; a body that is not designs changes nothing.
    @Test func onlyStudyMetadataAsksAndOnlyWithDesigns() async throws {
        try await ResponseHarness.run { h in
            let (registration, _) = try await rehearse(h, [Self.design("Daily", Self.everyStep)], caller: .registration)
            #expect(registration == .forbidden)
            let (numbers, _) = try await rehearse(h, ["[1]"])
            #expect(numbers == .badRequest)
            let (text, _) = try await rehearse(h, ["\"text\""])
            #expect(text == .badRequest)
            let left = try await traces(h)
            #expect(left == [0, 0, 0, 0, 0, 0])
        }
    }
}
