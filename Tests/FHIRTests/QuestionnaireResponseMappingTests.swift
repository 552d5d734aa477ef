import FHIR
import Foundation
import JSONText
import StudyModels
import Testing

@Suite struct QuestionnaireResponseMappingTests {
    static func design() throws -> ActivityDesign {
        let steps = try [
            #"{"type":"question","resultType":"scale","key":"pain","title":"Pain","format":{"minValue":0,"maxValue":10}}"#,
            #"{"type":"question","resultType":"textChoice","key":"symptoms","title":"Which?","format":{"selectionStyle":"Multiple","textChoices":[{"text":"Headache","value":"1"},{"text":"Other","value":"9","other":{"textfieldReq":true}}]}}"#,
            #"{"type":"question","resultType":"timeOfDay","key":"bed","title":"Bedtime"}"#,
            #"{"type":"question","resultType":"date","key":"since","title":"Since","format":{"style":"Date"}}"#,
            #"{"type":"question","resultType":"timeInterval","key":"nap","title":"Nap"}"#,
            #"{"type":"question","resultType":"text","key":"skipped","title":"Skipped"}"#,
            #"{"type":"form","resultType":"grouped","key":"meds","title":"Medicines","repeatable":true,"steps":[{"type":"question","resultType":"text","key":"name","title":"Name"},{"type":"question","resultType":"numeric","key":"dose","title":"Dose","format":{"style":"Integer"}}]}"#,
            #"{"type":"task","resultType":"towerOfHanoi","key":"towers","title":"Towers","format":{"numberOfDisks":3}}"#,
        ].map(FHIRSamples.step)
        return ActivityDesign(type: .questionnaire, metadata: ActivityMetadata(activityId: "survey", name: "A survey"), steps: steps)
    }

    static func results() -> [JSONValue] {
        [
            FHIRSamples.result("scale", "pain", .number(JSONNumber(6))),
            FHIRSamples.result("textChoice", "symptoms", .array([.string("1"), .object(["other": .string("9"), "text": .string("dizzy")])])),
            FHIRSamples.result("timeOfDay", "bed", .string("22:45:00")),
            FHIRSamples.result("date", "since", .string("2026-02-14T00:00:00.000+0100")),
            FHIRSamples.result("timeInterval", "nap", .number(JSONNumber(1800))),
            FHIRSamples.result("text", "skipped", .null, skipped: true),
            FHIRSamples.result("grouped", "meds", .array([
                .array([FHIRSamples.result("text", "name", .string("aspirin")), FHIRSamples.result("numeric", "dose", .number(JSONNumber(100)))]),
                .array([FHIRSamples.result("text", "name", .string("ibuprofen")), FHIRSamples.result("numeric", "dose", .number(JSONNumber(200)))]),
            ])),
            FHIRSamples.result("towerOfHanoi", "towers", .array([
                FHIRSamples.result("boolean", "puzzleWasSolved", .bool(true)), FHIRSamples.result("numeric", "numberOfMoves", .number(JSONNumber(7))),
            ])),
        ]
    }

    @Test func everyAnswerTakesTheTypeOfItsItem() throws {
        let design = try Self.design()
        let result = QuestionnaireResponseMapping.questionnaireResponse(FHIRSamples.response(Self.results(), design: design), naming: FHIRSamples.naming)
        #expect(result.notMapped.isEmpty, "\(result.notMapped)")
        let resource = result.resource
        #expect(resource["resourceType"]?.text == "QuestionnaireResponse")
        #expect(resource["id"]?.text == "7")
        #expect(resource["status"]?.text == "completed")
        #expect(resource["questionnaire"]?.text == "https://studies.example.org/fhir/r4/Questionnaire/FHIR.STUDY/survey|1.0")
        #expect(resource["subject"]?["reference"]?.text == "Patient/42")
        #expect(resource["source"]?["reference"]?.text == "Patient/42")
        #expect(resource["authored"]?.text == "2026-03-01T08:05:00.000+01:00", "the run's end, with its offset")
        #expect(resource["identifier"]?["value"]?.text == "42/survey/3")
        let items = resource["item"]?.elements ?? []
        #expect(items.map { $0["linkId"]?.text ?? "" } == ["pain", "symptoms", "bed", "since", "nap", "meds", "meds", "towers"],
            "a skipped question has no item; each repetition of the form is one group")
        #expect(resource.item("pain")?["answer"]?.elements == [.object(["valueInteger": .number(JSONNumber(6))])])
        let symptoms = resource.item("symptoms")?["answer"]?.elements ?? []
        #expect(symptoms.count == 3)
        #expect(symptoms[0]["valueCoding"]?["code"]?.text == "1")
        #expect(symptoms[0]["valueCoding"]?["display"]?.text == "Headache")
        #expect(symptoms[1]["valueCoding"]?["code"]?.text == "9")
        #expect(symptoms[2]["valueString"]?.text == "dizzy")
        #expect(resource.item("bed")?["answer"]?.elements.first?["valueTime"]?.text == "22:45:00")
        #expect(resource.item("since")?["answer"]?.elements.first?["valueDate"]?.text == "2026-02-14")
        let nap = resource.item("nap")?["answer"]?.elements.first?["valueQuantity"]
        #expect(nap?["value"] == .number(JSONNumber(1800)))
        #expect(nap?["code"]?.text == "s")
        #expect(nap?["system"]?.text == "http://unitsofmeasure.org")
        let meds = items.filter { $0["linkId"]?.text == "meds" }
        #expect(meds.count == 2)
        #expect(meds[1].item("meds.name")?["answer"]?.elements.first?["valueString"]?.text == "ibuprofen")
        #expect(meds[1].item("meds.dose")?["answer"]?.elements.first?["valueInteger"] == .number(JSONNumber(200)))
        #expect(resource.item("towers.numberOfMoves")?["answer"]?.elements.first?["valueInteger"] == .number(JSONNumber(7)))
        #expect(resource.item("towers.puzzleWasSolved")?["answer"]?.elements.first?["valueBoolean"] == .bool(true))
    }

    /// The linkIds of a response are those of its questionnaire, at every depth.
    @Test func theResponsesLinkIdsAreItsQuestionnaires() throws {
        let design = try Self.design()
        let questionnaire = FHIRSamples.questionnaire(design.steps).resource
        let response = QuestionnaireResponseMapping.questionnaireResponse(
            FHIRSamples.response(Self.results(), design: design), naming: FHIRSamples.naming).resource
        func linkIds(_ value: JSONValue) -> [String] {
            var found: [String] = []
            if let id = value["linkId"]?.text { found.append(id) }
            for key in ["item", "answer"] { for child in value[key]?.elements ?? [] { found += linkIds(child) } }
            return found
        }
        let answered = Set(linkIds(response))
        #expect(answered.count == 11, "pain, symptoms, bed, since, nap, meds and its two, towers and its two")
        #expect(answered.isSubset(of: Set(linkIds(questionnaire))), "\(answered.subtracting(linkIds(questionnaire)))")
    }

    @Test func answersOfTheWrongShapeAreListedNotInvented() throws {
        let design = try Self.design()
        let results = [
            FHIRSamples.result("scale", "pain", .string("six")),
            FHIRSamples.result("timeOfDay", "bed", .string("late")),
            FHIRSamples.result("towerOfHanoi", "towers", .string("solved")),
        ]
        let result = QuestionnaireResponseMapping.questionnaireResponse(FHIRSamples.response(results, design: design), naming: FHIRSamples.naming)
        #expect(result.notMapped.map(\.linkId) == ["pain", "bed", "towers"])
        #expect(result.resource["item"] == nil)
    }

    @Test func appDatesBecomeFHIRDatesOrNothing() {
        #expect(FHIRDates.dateTime("2026-03-01T08:00:00.000+0100") == "2026-03-01T08:00:00.000+01:00")
        #expect(FHIRDates.dateTime("2026-03-01T08:00:00Z") == "2026-03-01T08:00:00Z")
        #expect(FHIRDates.dateTime("2026-03-01T08:00:00.5-05:30") == "2026-03-01T08:00:00.5-05:30")
        #expect(FHIRDates.dateTime("2026-03-01") == "2026-03-01")
        #expect(FHIRDates.day("2026-03-01T23:00:00.000-0500") == "2026-03-01", "the day as the participant wrote it")
        for bad in ["2026-02-30", "2026-13-01T00:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T08:00:00+2400", "2026-03-01T08:00", "", "yesterday",
            "2026-03-01T08:00:00.0000000000Z"]
        {
            #expect(FHIRDates.dateTime(bad) == nil, "\(bad)")
        }
        #expect(FHIRDates.time("22:45") == "22:45:00")
        #expect(FHIRDates.time("25:00:00") == nil)
    }
}
