import Foundation
import JSONText
import SageAssessments
import StudyModels
import Testing

/// A Sage assessment made into an activity: its steps, keys and jumps, and what makes it Sage-only.
@Suite struct AssessmentImportTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8), budget: .studyDocument) }

    @Test func anAssessmentTheAppsCanRunBecomesAnActivityWithItsStepsKeysAndJumps() throws {
        let document = try parse(#"""
            {"type": "assessment", "identifier": "mood", "title": "Mood check", "steps": [
              {"type": "instruction", "identifier": "intro", "title": "Hello", "detail": "Two minutes"},
              {"type": "choiceQuestion", "identifier": "feeling", "title": "How do you feel?", "baseType": "integer",
               "choices": [{"text": "Well", "value": 1}, {"text": "Unwell", "value": 2}, {"text": "Rather not say", "value": 0, "selectorType": "exclusive"}],
               "surveyRules": [{"matchingAnswer": 1, "skipToIdentifier": "done"}]},
              {"type": "section", "identifier": "sleep", "title": "Sleep", "steps": [
                {"type": "simpleQuestion", "identifier": "hours", "optional": true,
                 "inputItem": {"type": "number", "formatOptions": {"minimumValue": 0, "maximumValue": 24}},
                 "surveyRules": [{"matchingAnswer": 4, "ruleOperator": "lt", "skipToIdentifier": "nextSection"}]},
                {"type": "simpleQuestion", "identifier": "quality", "uiHint": "likert",
                 "inputItem": {"type": "integer", "formatOptions": {"minimumValue": 1, "maximumValue": 5, "minimumLabel": "Poor"}}}]},
              {"type": "simpleQuestion", "identifier": "note", "inputItem": {"type": "string", "characterLimit": 200}, "uiHint": "multipleLine"},
              {"type": "completion", "identifier": "done"}]}
            """#)
        let imported = AssessmentImport(document)
        #expect(imported.sageOnlyReasons.isEmpty, "\(imported.sageOnlyReasons)")
        let activity = imported.activity
        #expect(activity.activityId == "mood")
        #expect(activity.title == LocalizedText("Mood check"))
        #expect(activity.schedule.frequency == .ongoing)
        #expect(activity.steps.map(\.key) == ["intro", "feeling", "sleep_hours", "sleep_quality", "note", "done"])
        #expect(activity.steps.map(\.resultType) == ["", "textChoice", "numeric", "scale", "text", ""])
        #expect(activity.steps.map(\.groupName) == [nil, nil, "Sleep", "Sleep", nil, nil])
        #expect(activity.steps[2].skippable == true)
        #expect(activity.steps[1].skippable == false)
        #expect(activity.branching)
        #expect(activity.steps[1].destinations == [Destination(condition: "1", operator: "", destination: "done"), Destination(destination: "sleep_hours")])
        #expect(activity.steps[2].destinations == [Destination(condition: "4", operator: "<", destination: "note"), Destination(destination: "sleep_quality")])
        guard case .choice(let choices)? = activity.steps[1].format else { Issue.record("not a choice"); return }
        #expect(choices.textChoices?.map(\.value) == ["1", "2", "0"])
        #expect(choices.textChoices?.map(\.exclusive) == [nil, nil, true])
        #expect(activity.assessment?.document == document)
        let study = StudyDocument(studyId: "S1", appId: "A1", name: "S", activities: [activity])
        #expect(StudyValidator.validate(study).filter { $0.pointer.hasPrefix("/activities") }.isEmpty)
    }

    @Test func whatTheAppsCannotRunMakesItSageOnlyWithEachReasonLocated() throws {
        let survey = try JSONValue.parse(Array(try Data(contentsOf: SageExamplesTests.fixtures.appendingPathComponent("README-extract/README_ExampleSurvey.json"))), budget: .studyDocument)
        let readme = AssessmentImport(survey)
        // A rule on a skipped answer, a choice that selects all, and "ne" on a choice question.
        #expect(readme.sageOnlyReasons.map(\.pointer) == [
            "/steps/1/surveyRules/0/matchingAnswer", "/steps/7/choices/4/selectorType", "/steps/8/surveyRules/0/ruleOperator",
        ])
        #expect(readme.activity.assessment?.isSageOnly == true)
        #expect(readme.activity.steps.isEmpty)
        // Without steps by design, it is not "an activity with no steps" to the draft's review.
        let review = StudyValidator.review(StudyDocument(studyId: "S1", appId: "A1", name: "S", activities: [readme.activity]))
        #expect(!(review.warnings + review.unfinished).contains { $0.pointer.hasPrefix("/activities/0/steps") })
        #expect(readme.activity.assessment?.document == survey)
        let other = AssessmentImport(try parse(#"""
            {"type": "assessment", "identifier": "walk", "steps": [
              {"type": "permission", "identifier": "motion", "permissionType": "motion"},
              {"type": "countdown", "identifier": "ready", "duration": 5},
              {"type": "simpleQuestion", "identifier": "feel", "inputItem": {"type": "string"},
               "surveyRules": [{"matchingAnswer": "ok", "ruleOperator": "gt", "skipToIdentifier": "exit"}]}]}
            """#))
        #expect(other.sageOnlyReasons.map(\.pointer) == ["/steps/0/type", "/steps/1/type", "/steps/2/surveyRules/0/ruleOperator"])
        #expect(other.sageOnlyReasons[0].message == "a permission step: the MyStudies apps have no such step")
    }

    @Test func aReimportKeepsTheScheduleArmAndVersionLabelItWasGiven() throws {
        var previous = AssessmentImport(try parse(#"{"type": "assessment", "identifier": "a1", "steps": [{"type": "instruction", "identifier": "i"}]}"#)).activity
        previous.schedule = Schedule(frequency: .daily)
        previous.arm = "B"
        previous.versionLabel = "3"
        let again = AssessmentImport(try parse(#"{"type": "assessment", "identifier": "a1", "steps": [{"type": "completion", "identifier": "c"}]}"#), replacing: previous)
        #expect(again.activity.schedule.frequency == .daily)
        #expect(again.activity.arm == "B")
        #expect(again.activity.versionLabel == "3")
        #expect(again.activity.steps.map(\.key) == ["c"])
    }
}

/// Every official example of a step and of an input, in an assessment of its own: imported,
/// served to the MyStudies apps or Sage-only for the reason docs/sage.md gives.
@Suite struct ExampleImportTests {
    static let expectedSageOnly: [String: String] = [
        "CountdownStepObject_0.json": "/steps/0/type",
        "PermissionStepObject_0.json": "/steps/0/type",
    ]

    @Test func everyStepAndInputExampleImports() throws {
        let schemas = try SageSchemaSet.bundled()
        let examples = try SageExamplesTests.examples().filter { $0.file == "Node.json" || $0.file == "TextInputItem.json" }
        #expect(examples.count == 14)
        var outcomes: [String: [String]] = [:]
        for example in examples {
            let part = try SageExamplesTests.parse(example.url)
            let step: JSONValue = example.file == "Node.json" ? part
                : .object(["type": .string("simpleQuestion"), "identifier": .string("q"), "inputItem": part])
            let assessment: JSONValue = .object(["type": .string("assessment"), "identifier": .string("example"), "steps": .array([step])])
            let check = AssessmentCheck.check(assessment, schemas: schemas)
            #expect(check.errors.isEmpty, "\(example.url.lastPathComponent): \(check.errors)")
            outcomes[example.url.lastPathComponent] = AssessmentImport(assessment).sageOnlyReasons.map(\.pointer)
        }
        for (name, reasons) in outcomes.sorted(by: { $0.key < $1.key }) {
            #expect(reasons == Self.expectedSageOnly[name].map { [$0] } ?? [], "\(name): \(reasons)")
        }
    }
}
