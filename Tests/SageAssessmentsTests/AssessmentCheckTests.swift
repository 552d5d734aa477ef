import JSONText
import SageAssessments
import StudyModels
import Testing

/// The rules of an assessment, one bad document each: what the check says and where.
@Suite struct AssessmentCheckTests {
    static let schemas = Result { try SageSchemaSet.bundled() }

    private func check(_ steps: String, root: String = "") throws -> AssessmentCheck {
        let text = #"{"type": "assessment", "identifier": "survey1", \#(root) "steps": \#(steps)}"#
        return AssessmentCheck.check(try JSONValue.parse(Array(text.utf8), budget: .studyDocument), schemas: try Self.schemas.get())
    }

    private func pointers(_ problems: [ValidationProblem]) -> [String] { problems.map(\.pointer) }

    @Test func aWellFormedAssessmentHasNoProblem() throws {
        let result = try check(#"""
            [{"type": "instruction", "identifier": "intro", "title": "Hello"},
            {"type": "simpleQuestion", "identifier": "age", "inputItem": {"type": "integer", "formatOptions": {"minimumValue": 18, "maximumValue": 99}}},
            {"type": "choiceQuestion", "identifier": "mood", "baseType": "string", "choices": [{"text": "Good", "value": "good"}, {"text": "Bad", "value": "bad"}]},
            {"type": "completion", "identifier": "done"}]
            """#)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
    }

    @Test func eachStepIsCheckedAgainstTheDefinitionOfItsType() throws {
        // Without dispatch, Node.json's root asks only for type and identifier: all three passed.
        let result = try check(#"""
            [{"type": "choiceQuestion", "identifier": "q1", "baseType": "string"},
            {"type": "countdown", "identifier": "wait", "duration": "ten"},
            {"type": "simpleQuestion", "identifier": "q2", "inputItem": {"type": "integer", "formatOptions": {"minimumValue": "low"}}}]
            """#)
        #expect(pointers(result.errors) == ["/steps/0", "/steps/1/duration", "/steps/2/inputItem/formatOptions/minimumValue"])
        #expect(result.errors[0].message.hasPrefix(#"the member "choices" is required (schema: "#))
    }

    @Test func stepsARunnerRefusesAreErrors() throws {
        let result = try check(#"""
            [{"type": "section", "identifier": "s1", "steps": [
                {"type": "section", "identifier": "inner", "steps": [{"type": "instruction", "identifier": "i"}]},
                {"type": "instruction", "identifier": "dup"}, {"type": "instruction", "identifier": "dup"}]},
            {"type": "multipleInputQuestion", "identifier": "legacy"},
            {"type": "video", "identifier": "v"},
            {"type": "simpleQuestion", "identifier": "pin", "inputItem": {"type": "string", "regExValidator": {"pattern": "[0-9", "invalidMessage": "digits"}}},
            {"type": "simpleQuestion", "identifier": "range", "inputItem": {"type": "number", "formatOptions": {"minimumValue": 10, "maximumValue": 1}}},
            {"type": "simpleQuestion", "identifier": "box", "inputItem": {"type": "checkbox"}},
            {"type": "choiceQuestion", "identifier": "n", "baseType": "integer", "choices": [{"text": "one", "value": "1"}]},
            {"type": "instruction", "identifier": "fly", "shouldHideActions": ["fly"]}]
            """#)
        #expect(pointers(result.errors) == [
            "/steps/0/steps/0/type", "/steps/0/steps/2/identifier", "/steps/1/type", "/steps/2/type",
            "/steps/3/inputItem/regExValidator/pattern", "/steps/4/inputItem/formatOptions/maximumValue", "/steps/5/inputItem/type",
            "/steps/6/choices/0/value", "/steps/7/shouldHideActions/0",
        ])
        #expect(result.errors[2].message.contains("legacy type only Sage's Kotlin library reads"))
    }

    @Test func whatARunnerAcceptsButProbablyNotAsMeantIsAWarning() throws {
        let result = try check(#"""
            [{"type": "choiceQuestion", "identifier": "c", "singleChoice": true, "uiHint": "wheel",
                "choices": [{"text": "a", "value": "a", "selectorType": "all"}, {"text": "b", "value": "a"}],
                "surveyRules": [{"matchingAnswer": "z", "skipToIdentifier": "nowhere"}], "nextStepIdentifier": "end"},
            {"type": "instruction", "identifier": "end", "image": {"type": "sageResource", "imageName": "survey"}}]
            """#,
            root: #""$schema": "https://example.org/AssessmentObject.json","#)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(pointers(result.warnings) == [
            "/$schema", "/steps/0/surveyRules/0/skipToIdentifier", "/steps/0/nextStepIdentifier", "/steps/0/uiHint", "/steps/0/baseType",
            "/steps/0/choices/0/selectorType", "/steps/0/choices/1/value", "/steps/0/surveyRules/0/matchingAnswer",
            "/steps/1/image/imageName",
        ])
    }

    @Test func theDocumentItselfMustBeAnAssessment() throws {
        let schemas = try Self.schemas.get()
        #expect(pointers(AssessmentCheck.check(.array([]), schemas: schemas).errors) == [""])
        let wrong = AssessmentCheck.check(try JSONValue.parse(Array(#"{"type": "survey", "identifier": "a b", "steps": []}"#.utf8), budget: .studyDocument), schemas: schemas)
        #expect(pointers(wrong.errors) == ["/type", "/identifier", "/steps"])
        let missing = AssessmentCheck.check(try JSONValue.parse(Array(#"{"type": "assessment"}"#.utf8), budget: .studyDocument), schemas: schemas)
        #expect(missing.errors.map(\.message) == [#"the member "identifier" is required (schema: /required)"#, #"the member "steps" is required (schema: /required)"#])
    }
}
