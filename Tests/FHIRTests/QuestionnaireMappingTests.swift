import FHIR
import Foundation
import JSONText
import StudyModels
import Testing

@Suite struct QuestionnaireMappingTests {
    /// R4's item type for each response type, as the FHIR specification's item-type value set
    /// names the kind of answer (docs/fhir.md has the same table).
    static let expectedTypes: [String: String] = [
        "scale": "integer", "continuousScale": "decimal", "textScale": "choice", "valuePicker": "choice",
        "imageChoice": "choice", "textChoice": "choice", "boolean": "boolean", "numeric": "integer", "timeOfDay": "time",
        "date": "date", "text": "string", "email": "string", "timeInterval": "quantity", "height": "quantity",
        "location": "string", "grouped": "group", "fetalKickCounter": "group", "": "display",
    ]

    @Test func everyStepOfTheExampleStudyBecomesAnItemOfItsType() throws {
        let designs = try FHIRSamples.exampleDesigns()
        #expect(designs.count == 9)
        var seen: Set<String> = []
        for (activityId, design) in designs {
            let result = QuestionnaireMapping.questionnaire(
                QuestionnaireVersion(studyId: "EXAMPLE", activityId: activityId, version: "1.0", design: design), naming: FHIRSamples.naming)
            let items = result.resource["item"]?.elements ?? []
            #expect(items.count == design.steps.count, "\(activityId)")
            for (step, item) in zip(design.steps, items) {
                #expect(item["linkId"]?.text == step.key)
                let type = item["type"]?.text ?? ""
                if step.responseType == .numeric || step.responseType == .date || step.responseType == .text
                    || step.responseType == .scale
                {
                    // Styled: integer/decimal, date/dateTime, string/text; scale integer or decimal.
                    #expect(["integer", "decimal", "date", "dateTime", "string", "text"].contains(type), "\(step.key): \(type)")
                } else if step.responseType == .textChoice {
                    // Open when one of its choices takes free text.
                    let open = step.format.map { if case .choice(let format) = $0 { format.textChoices?.contains { $0.other != nil } == true } else { false } } ?? false
                    #expect(type == (open ? "open-choice" : "choice"), "\(step.key): \(type)")
                } else {
                    #expect(type == Self.expectedTypes[step.resultType], "\(step.key) (\(step.resultType)): \(type)")
                }
                seen.insert(step.resultType)
                for child in step.steps ?? [] {
                    #expect(item.item("\(step.key).\(child.key)") != nil, "the form's question \(child.key) is in its group")
                }
            }
        }
        // The example study has every response type, a form and a task.
        #expect(seen.isSuperset(of: Set(ResponseType.allCases.map(\.rawValue))), "\(seen)")
        #expect(seen.contains("grouped") && seen.contains("fetalKickCounter"))
    }

    @Test func theQuestionnaireNamesItsActivityStudyAndExactVersion() throws {
        let result = FHIRSamples.questionnaire([try FHIRSamples.step(#"{"type":"question","resultType":"boolean","key":"ok","title":"OK?"}"#)])
        let resource = result.resource
        #expect(resource["resourceType"]?.text == "Questionnaire")
        #expect(resource["url"]?.text == "https://studies.example.org/fhir/r4/Questionnaire/FHIR.STUDY/survey")
        #expect(resource["version"]?.text == "1.0")
        #expect(resource["status"]?.text == "active")
        #expect(resource["name"]?.text == "Survey")
        #expect(resource["title"]?.text == "A survey")
        #expect(resource["identifier"]?.elements.first?["value"]?.text == "survey")
        #expect(resource["useContext"]?.elements.first?["valueReference"]?["reference"]?.text == "ResearchStudy/FHIR.STUDY")
        let id = try #require(resource["id"]?.text)
        #expect(FHIRId.isValid(id))
        #expect(id == FHIRId.questionnaire(studyId: "FHIR_STUDY", activityId: "survey", version: "1.0"))
        #expect(id != FHIRId.questionnaire(studyId: "FHIR_STUDY", activityId: "survey", version: "1.1"))
        #expect(result.notMapped.isEmpty)
    }

    @Test func choicesAreAnswerOptionsWithTheirControlsAndExclusiveOrOther() throws {
        let choice = try FHIRSamples.step("""
            {"type":"question","resultType":"textChoice","key":"symptoms","title":"Which?","skippable":false,
             "format":{"selectionStyle":"Multiple","textChoices":[
               {"text":"Headache","value":"1"},{"text":"None","value":"0","exclusive":true},
               {"text":"Other","value":"9","other":{"textfieldReq":true}}]}}
            """)
        let picker = try FHIRSamples.step("""
            {"type":"question","resultType":"valuePicker","key":"pick","title":"Pick","format":{"textChoices":[{"text":"A","value":"a"}]}}
            """)
        let result = FHIRSamples.questionnaire([choice, picker])
        let item = try #require(result.resource.item("symptoms"))
        #expect(item["type"]?.text == "open-choice", "an option with free text makes it open")
        #expect(item["repeats"] == .bool(true))
        #expect(item["required"] == .bool(true))
        let options = item["answerOption"]?.elements ?? []
        #expect(options.count == 3)
        #expect(options.map { $0["valueCoding"]?["code"]?.text ?? "" } == ["1", "0", "9"])
        #expect(options[0]["valueCoding"]?["display"]?.text == "Headache")
        #expect(options[0]["valueCoding"]?["system"]?.text == "https://studies.example.org/fhir/r4/Questionnaire/FHIR.STUDY/survey/choices/symptoms")
        #expect(options[1].extensionValue(FHIRExtension.optionExclusive) == .bool(true))
        #expect(options[0].extensionValue(FHIRExtension.optionExclusive) == nil)
        #expect(item.extensionValue(FHIRExtension.itemControl)?["coding"]?.elements.first?["code"]?.text == "check-box")
        let pick = try #require(result.resource.item("pick"))
        #expect(pick["type"]?.text == "choice")
        #expect(pick.extensionValue(FHIRExtension.itemControl)?["coding"]?.elements.first?["code"]?.text == "drop-down")
    }

    @Test func scalesNumbersTextsAndDatesKeepTheirBoundsWithTheStandardExtensions() throws {
        let steps = try [
            #"{"type":"question","resultType":"scale","key":"pain","title":"Pain","format":{"minValue":0,"maxValue":10,"step":2,"default":4,"minDesc":"None","maxDesc":"Worst"}}"#,
            #"{"type":"question","resultType":"continuousScale","key":"mood","title":"Mood","format":{"minValue":0,"maxValue":1,"maxFractionDigits":2}}"#,
            #"{"type":"question","resultType":"numeric","key":"weight","title":"Weight","format":{"style":"Decimal","unit":"kg","minValue":20,"maxValue":300}}"#,
            #"{"type":"question","resultType":"text","key":"notes","title":"Notes","format":{"maxLength":200,"multipleLines":true,"validationRegex":"[a-z]*"}}"#,
            #"{"type":"question","resultType":"date","key":"since","title":"Since","format":{"style":"Date","minDate":"2020-01-01T00:00:00.000+0000","maxDate":"2030-12-31T00:00:00.000+0000","dateRange":"custom"}}"#,
            #"{"type":"question","resultType":"height","key":"height","title":"Height","format":{"measurementSystem":"Metric"}}"#,
        ].map(FHIRSamples.step)
        let resource = FHIRSamples.questionnaire(steps).resource
        let pain = try #require(resource.item("pain"))
        #expect(pain["type"]?.text == "integer")
        #expect(pain.extensionValue(FHIRExtension.minValue) == .number(JSONNumber(0)))
        #expect(pain.extensionValue(FHIRExtension.maxValue) == .number(JSONNumber(10)))
        #expect(pain.extensionValue(FHIRExtension.sliderStepValue) == .number(JSONNumber(2)))
        #expect(pain["initial"]?.elements.first?["valueInteger"] == .number(JSONNumber(4)))
        #expect(pain.item("pain.lower")?["text"]?.text == "None")
        #expect(pain.item("pain.upper")?["text"]?.text == "Worst")
        let mood = try #require(resource.item("mood"))
        #expect(mood["type"]?.text == "decimal")
        #expect(mood.extensionValue(FHIRExtension.maxDecimalPlaces) == .number(JSONNumber(2)))
        let weight = try #require(resource.item("weight"))
        #expect(weight["type"]?.text == "decimal")
        #expect(weight.extensionValue(FHIRExtension.unit)?["display"]?.text == "kg")
        let notes = try #require(resource.item("notes"))
        #expect(notes["type"]?.text == "text")
        #expect(notes["maxLength"] == .number(JSONNumber(200)))
        #expect(notes.extensionValue(FHIRExtension.regex)?.text == "[a-z]*")
        let since = try #require(resource.item("since"))
        #expect(since.extensionValue(FHIRExtension.minValue)?.text == "2020-01-01")
        #expect(since.extensionValue(FHIRExtension.maxValue)?.text == "2030-12-31")
        let height = try #require(resource.item("height"))
        #expect(height.extensionValue(FHIRExtension.unitOption)?["code"]?.text == "cm")
    }

    /// A jump past steps shows them only while the jump is not taken: the negated comparison.
    @Test func branchingBecomesEnableWhenOnTheStepsAJumpSkips() throws {
        let steps = try [
            #"{"type":"question","resultType":"boolean","key":"smoker","title":"Smoke?","destinations":[{"condition":"false","destination":"sleep"},{"condition":"","destination":"cigarettes"}]}"#,
            #"{"type":"question","resultType":"numeric","key":"cigarettes","title":"How many?","format":{"style":"Integer"},"destinations":[{"condition":"20","operator":">","destination":""},{"condition":"","destination":"since"}]}"#,
            #"{"type":"question","resultType":"date","key":"since","title":"Since?","format":{"style":"Date"}}"#,
            #"{"type":"question","resultType":"text","key":"sleep","title":"Sleep?"}"#,
        ].map(FHIRSamples.step)
        let result = FHIRSamples.questionnaire(steps)
        #expect(result.notMapped.isEmpty, "\(result.notMapped)")
        let cigarettes = try #require(result.resource.item("cigarettes"))
        #expect(cigarettes["enableWhen"]?.elements == [
            .object(["question": .string("smoker"), "operator": .string("!="), "answerBoolean": .bool(false)]),
        ])
        let since = try #require(result.resource.item("since"))
        let conditions = since["enableWhen"]?.elements ?? []
        #expect(conditions.count == 2)
        #expect(conditions.contains(.object(["question": .string("cigarettes"), "operator": .string("<="), "answerInteger": .number(JSONNumber(20))])))
        #expect(since["enableBehavior"]?.text == "all")
        let sleep = try #require(result.resource.item("sleep"))
        #expect(sleep["enableWhen"]?.elements == [
            .object(["question": .string("cigarettes"), "operator": .string("<="), "answerInteger": .number(JSONNumber(20))]),
        ])
        #expect(result.resource.item("smoker")?["enableWhen"] == nil)
    }

    @Test func whatFHIRCannotSayIsListedInTheResultAndTheResource() throws {
        let steps = try [
            #"{"type":"question","resultType":"text","key":"a","title":"A"}"#,
            #"{"type":"question","resultType":"text","key":"b","title":"B","destinations":[{"condition":"x","destination":"a"},{"condition":"","destination":"c"}]}"#,
            #"{"type":"question","resultType":"location","key":"c","title":"Where?"}"#,
            #"{"type":"question","resultType":"imageChoice","key":"d","title":"Pick","format":{"imageChoices":[{"image":"aGk=","selectedImage":"aGk=","text":"Sun","value":"sun"}]}}"#,
        ].map(FHIRSamples.step)
        let result = FHIRSamples.questionnaire(steps)
        #expect(result.notMapped.count == 3, "\(result.notMapped)")
        #expect(result.notMapped.contains { $0.linkId == "b" && $0.reason.contains("branch back to 'a'") })
        #expect(result.notMapped.contains { $0.linkId == "c" && $0.reason.contains("latitude,longitude") })
        #expect(result.notMapped.contains { $0.linkId == "d" && $0.reason.contains("images") })
        let listed = result.resource["extension"]?.elements.compactMap { $0["valueString"]?.text } ?? []
        #expect(listed.count == 3)
        #expect(listed.allSatisfy { _ in result.resource["extension"]?.elements.allSatisfy {
            $0["url"]?.text == QuestionnaireMapping.notMappedExtension(FHIRSamples.naming)
        } == true })
    }

    @Test func studyIdsBecomeFHIRIdsAndBackExactly() {
        #expect(FHIRId.study("MY_STUDY-1") == "MY.STUDY-1")
        #expect(FHIRId.studyId(from: "MY.STUDY-1") == "MY_STUDY-1")
        #expect(FHIRId.studyId(from: "MY_STUDY") == nil, "an id with _ is not a FHIR id")
        #expect(FHIRId.studyId(from: "") == nil)
        #expect(FHIRId.studyId(from: String(repeating: "A", count: 65)) == nil)
        #expect(FHIRId.isValid(FHIRId.study(String(repeating: "a_", count: 32))))
    }
}
