import Foundation
import StudyModels
import Testing
import TestSupport

/// Schema protocols made into the study model (docs/schema-protocols.md, Import), and the app's
/// answers into the results the study's tables take.
@Suite struct SchemaImportTests {
    static func demo(_ path: String = "demo_protocol.json") throws -> Data {
        try SchemaProtocolCheckTests.fixture(path)
    }

    /// The study the demo protocol makes passes the study model's own checks.
    static func document(_ reading: SchemaImport) -> StudyDocument {
        var document = StudyDocument(studyId: "DEMO", appId: "APP", name: "x")
        reading.apply(to: &document)
        return document
    }

    @Test func theDemoProtocolBecomesAStudyOfTwoActivitiesWithArmsAndAChart() throws {
        let reading = SchemaImport.read(try Self.demo())
        #expect(reading.errors.isEmpty, "\(reading.errors)")
        #expect(reading.warnings.map(\.pointer) == ["/modules/1/alerts/timeout_after"])
        #expect(reading.protocolStudyId == "3ZDOGAH")
        #expect(reading.name == "Demo")
        #expect(reading.arms == StudyArms(names: ["Control", "Treatment"], assignment: .block))
        try #require(reading.activities.count == 2)
        let (welcome, elements) = (reading.activities[0], reading.activities[1])
        #expect(welcome.activityId == "3fb09fcd-4fca-4074-a395-34d65ee5a521")
        #expect(welcome.arm == "Control")
        #expect(welcome.schedule.sticky == true && welcome.schedule.stickyLabel == "Start here")
        #expect(welcome.schedule.dailyTimes == ["08:30"] && welcome.schedule.startDays == 0 && welcome.schedule.endDays == 0)
        #expect(welcome.schedule.jitterMinutes == 30)
        #expect(elements.arm == nil)
        #expect(elements.schedule.dailyTimes == ["09:30", "12:30", "15:30", "18:30"])
        #expect(elements.schedule.startDays == 1 && elements.schedule.endDays == 5)
        #expect(elements.schedule.expiresAfterMilliseconds == 30)
        #expect(elements.steps.map(\.resultType) == ["", "text", "date", "textChoice", "", "", "continuousScale", "boolean"])
        #expect(elements.steps.map(\.groupName) == Array(repeating: "Section 1", count: 5) + Array(repeating: "Section 2", count: 3))
        let multi = elements.steps[3]
        guard case .choice(let choice)? = multi.format else { Issue.record("\(String(describing: multi.format))"); return }
        #expect(choice.selectionStyle == .single)
        #expect(choice.textChoices?.compactMap(\.value) == ["apple", "orange", "banana"])
        #expect(elements.steps[4].visibility == VisibilityRule(source: "multi-q8bohlar", operator: .equal, value: .string("banana")))
        #expect(elements.steps[5].format == .other(.object([
            "media": .string("image"), "src": .string("https://getschema.app/img/schema_banner.jpg"), "thumb": .string(""),
        ])))
        #expect(elements.steps[1].skippable == false)
        #expect(reading.charts.count == 1)
        #expect(reading.charts.first?.dataSource == DashboardSource(activityId: elements.activityId, key: "slider-0yih1evt"))
        #expect(reading.consent?.visualScreens.map(\.type) == [.overview, .custom])
        let review = StudyValidator.review(Self.document(reading))
        #expect(review.problems.isEmpty, "\(review.problems)")
        #expect(Self.document(reading).source?.document == (try JSONValue.parse(try Self.demo(), budget: .studyDocument)))
    }

    @Test func theVersion1DemoImportsWithGeneratedIdsAndTheLaterOfEachRepeatedQuestion() throws {
        let reading = SchemaImport.read(try Self.demo("v1.0/demo_protocol.json"))
        #expect(reading.errors.isEmpty, "\(reading.errors)")
        #expect(reading.activities.map(\.activityId) == ["module-0", "module-1", "module-2", "module-3"])
        #expect(reading.activities.map(\.arm) == ["Control", "Intervention", nil, nil])
        // unwind_q1..3 appear twice in module 1: one step each, the later question's.
        let keys = reading.activities[1].steps.map(\.key)
        #expect(Set(keys).count == keys.count)
        #expect(["unwind_q1", "unwind_q2", "unwind_q3"].allSatisfy(keys.contains))
        let review = StudyValidator.review(Self.document(reading))
        #expect(review.problems.isEmpty, "\(review.problems)")
    }

    @Test func aBrokenProtocolIsRefusedWithItsPlaceAndNothingMapped() throws {
        let broken = Data(try Self.demo().prefix(500))
        let reading = SchemaImport.read(broken)
        try #require(reading.errors.count == 1)
        #expect(reading.errors[0].pointer == "")
        #expect(reading.errors[0].message.hasPrefix("the protocol is not valid JSON"))
        #expect(reading.activities.isEmpty && reading.source == nil)
    }

    @Test func modulesNoParticipantCanBeGivenAndUnusableIdsAreRefused() throws {
        var value = try JSONValue.parse(try Self.demo(), budget: .studyDocument)
        try value.set(.string("Placebo"), at: try #require(JSONPointer("/modules/0/condition")))
        try value.set(.number(0), at: try #require(JSONPointer("/modules/1/alerts/duration")))
        try value.set(.string("what is this?"), at: try #require(JSONPointer("/modules/1/sections/0/questions/1/id")))
        try value.set(.string("apple"), at: try #require(JSONPointer("/modules/1/sections/0/questions/3/options/1")))
        let reading = SchemaImport.read(Array(value.serialized().utf8))
        #expect(reading.errors.map(\.pointer).sorted() == [
            "/modules/0/condition", "/modules/1/alerts/duration", "/modules/1/sections/0/questions/1/id",
            "/modules/1/sections/0/questions/3/options/1",
        ])
    }

    @Test func answersBecomeResultsTheWaysTheAppWritesThem() throws {
        let protocolValue = try JSONValue.parse(try Self.demo(), budget: .studyDocument)
        let pointer = try #require(JSONPointer("/modules/1"))
        let module = try #require(protocolValue[pointer: pointer])
        let converted = SchemaAnswers.convert(module: module, answers: [
            "instruction-pvke1yey": .string(""), "text-71nnpqzi": .string("hello"),
            "datetime-79ygddzl": .string("2019-05-08T23:16:21.123+10:00"), "multi-q8bohlar": .string("banana"),
            "slider-0yih1evt": .string("7"), "yesno-mv09ggb1": .string("No"), "stray": .number(1),
        ])
        var byKey: JSONObject = [:]
        for result in converted.results { byKey[result["key"]?.text ?? ""] = result }
        #expect(byKey.count == 5)
        #expect(byKey["text-71nnpqzi"]?["value"] == .string("hello"))
        #expect(byKey["datetime-79ygddzl"]?["value"] == .string("2019-05-08"))
        #expect(byKey["multi-q8bohlar"]?["value"] == .array([.string("banana")]))
        #expect(byKey["slider-0yih1evt"]?["value"] == .number(7))
        #expect(byKey["yesno-mv09ggb1"]?["value"] == .bool(false))
        #expect(converted.notes == ["\"stray\" is not a question of the module; its answer is kept with the submission only"])
    }

    /// An answer under a spelling of a question's id that differs only in normalisation is no
    /// answer to that question: the question is unanswered and the note names the answer's id.
    @Test func anAnswersIdIsMatchedByItsScalars() throws {
        let module = try JSONValue.parse(Array(#"{"sections": [{"questions": [{"id": "caf\u00e9", "type": "text"}]}]}"#.utf8), budget: .studyDocument)
        let converted = SchemaAnswers.convert(module: module, answers: ["cafe\u{301}": .string("latte")])
        try #require(converted.results.count == 1)
        #expect(converted.results[0]["skipped"] == .bool(true))
        #expect(converted.notes.map { Array($0.unicodeScalars) } == [
            Array("\"cafe\u{301}\" is not a question of the module; its answer is kept with the submission only".unicodeScalars)
        ])
        let matched = SchemaAnswers.convert(module: module, answers: ["caf\u{e9}": .string("latte")])
        #expect(matched.results.first?["value"] == .string("latte"))
        #expect(matched.notes.isEmpty)
    }

    @Test func checkboxListsTimesAndUnreadableAnswers() throws {
        let module: JSONValue = try JSONValue.parse(Array("""
            {"sections": [{"questions": [
              {"id": "c", "type": "multi", "radio": false, "modal": false, "options": ["a", "b", "c"]},
              {"id": "m", "type": "multi", "radio": false, "modal": true, "options": ["a", "b"]},
              {"id": "t", "type": "datetime", "subtype": "time"},
              {"id": "d", "type": "datetime", "subtype": "datetime"},
              {"id": "n", "type": "text", "subtype": "numeric"},
              {"id": "y", "type": "yesno", "yes_text": "Sure", "no_text": "Nope"}
            ]}]}
            """.utf8), budget: .studyDocument)
        let converted = SchemaAnswers.convert(module: module, answers: [
            "c": .string("b;a;"), "m": .array([.string("a"), .string("b")]), "t": .string("2020-01-02T07:05:09+01:00"),
            "d": .string("2020-01-02T07:05Z"), "n": .string("twelve"), "y": .string("true"),
        ])
        let values = converted.results.map { $0["value"] }
        #expect(values == [
            .array([.string("b"), .string("a")]), .array([.string("a"), .string("b")]), .string("07:05:09"),
            .string("2020-01-02T07:05:00.000+0000"), .null, .null,
        ])
        #expect(converted.results[4]["skipped"] == .bool(true))
        #expect(converted.notes.count == 2)
    }
}
