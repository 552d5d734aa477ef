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

    /// A page or an export maps many responses through one prepared mapper per version and
    /// language: each comes out as it would alone, and the languages do not mix.
    @Test func mappersPreparedOncePerVersionAndLanguageGiveWhatEachResponseGivesAlone() throws {
        let design = try Self.design()
        var mappers = QuestionnaireResponseMapping.Mappers(naming: FHIRSamples.naming)
        var responses: [StoredResponse] = []
        for (index, language) in [nil, "fr", nil, "fr-CA", "en"].enumerated() {
            var response = FHIRSamples.response(Self.results(), design: design, id: Int64(index + 1))
            response.language = language
            responses.append(response)
        }
        #expect(responses.count == 5)
        for response in responses {
            let mapped = mappers.map(response)
            let alone = QuestionnaireResponseMapping.questionnaireResponse(response, naming: FHIRSamples.naming)
            #expect(mapped.resource == alone.resource, "response \(response.id)")
            #expect(mapped.notMapped == alone.notMapped)
        }
    }

    /// An export writes each response straight to text; a read parses that text back. The line
    /// is the read's resource, member for member, opens with its `resourceType`, holds no
    /// newline of its own, and has no empty object or array anywhere (FHIR allows none): an
    /// answer that would have been one (a choice with neither code nor code system) is listed
    /// as not mapped instead.
    @Test func anExportLineIsTheReadsResourceAsText() throws {
        let design = try Self.design()
        var results = Self.results()
        results.append(.object(["key": .string("unknown"), "resultType": .string("textChoice"), "value": .array([.string("")])]))
        let response = FHIRSamples.response(results, design: design)
        var mappers = QuestionnaireResponseMapping.Mappers(naming: FHIRSamples.naming)
        var text = FHIRText()
        let notMapped = mappers.write(response, to: &text)
        text.endLine()
        let line = text.bytes
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") })
        #expect(line.starts(with: Array(#"{"resourceType":"QuestionnaireResponse","id":"#.utf8)))
        let parsed = try JSONValue.parse(line.dropLast(), budget: .responseAnswers)
        let read = QuestionnaireResponseMapping.questionnaireResponse(response, naming: FHIRSamples.naming)
        #expect(parsed == read.resource)
        #expect(notMapped == read.notMapped)
        #expect(notMapped.contains { $0.linkId == "unknown" })
        func hasEmpty(_ value: JSONValue) -> Bool {
            switch value {
            case .object(let members): members.isEmpty || members.contains { hasEmpty($0.value) }
            case .array(let items): items.isEmpty || items.contains(where: hasEmpty)
            case .string(let text): text.isEmpty
            default: false
            }
        }
        #expect(!hasEmpty(parsed))
        #expect((parsed["item"]?.array?.count ?? 0) >= 8)
    }

    /// An export writes each response from the text its answers were stored as, which
    /// PostgreSQL writes its own way (spaces after separators, non-ASCII text as itself, control
    /// characters escaped): what it writes is, byte for byte, what the parsed value gives.
    @Test func anExportWritesFromTheStoredTextWhatTheParsedValueGives() throws {
        let design = try Self.design()
        var results = Self.results()
        results.append(FHIRSamples.result("text", "notes", .string("two\nlines, \"quoted\", caf\u{e9} \u{1F600}\u{1}")))
        let response = FHIRSamples.response(results, design: design)
        let compact = response.data.serialized(sortedKeys: false)
        // As `jsonb::text` spaces it; the strings' escapes are left as written.
        var spaced = ""
        var inString = false
        var escaped = false
        for character in compact.unicodeScalars {
            spaced.unicodeScalars.append(character)
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "," || character == ":" {
                spaced += " "
            }
        }
        #expect(spaced.count > compact.count + 50)
        #expect(try JSONValue.parse(Array(spaced.utf8), budget: .responseAnswers) == response.data)
        var mappers = QuestionnaireResponseMapping.Mappers(naming: FHIRSamples.naming)
        var fromValue = FHIRText()
        var fromText = FHIRText()
        let valueNotMapped = mappers.write(response, to: &fromValue)
        var unparsed = response
        unparsed.data = .object([:])
        #expect(mappers.write(unparsed, answers: Array(spaced.utf8), to: &fromText) == valueNotMapped)
        #expect(String(decoding: fromText.bytes, as: UTF8.self) == String(decoding: fromValue.bytes, as: UTF8.self))
        let written = try JSONValue.parse(fromText.bytes, budget: .responseAnswers)
        #expect(written.item("notes")?["answer"]?.elements.first?["valueString"] == .string("two\nlines, \"quoted\", caf\u{e9} \u{1F600}\u{1}"))
        #expect((written["item"]?.array?.count ?? 0) >= 8)

        // Answers stored as text that no longer reads as JSON are written as none, as a read
        // of them shows them: no items, and authored when received.
        var broken = FHIRText()
        mappers.write(unparsed, answers: Array(spaced.utf8.dropLast()), to: &broken)
        let none = try JSONValue.parse(broken.bytes, budget: .responseAnswers)
        #expect(none["item"] == nil)
        #expect(none["authored"] == .string(FHIRJSON.instant(response.receivedAt)))
        #expect(none["id"] == .string("7"))
        // The next response of the same mapper is read whole again.
        var again = FHIRText()
        mappers.write(unparsed, answers: Array(spaced.utf8), to: &again)
        #expect(again.bytes == fromValue.bytes)
    }

    /// Two step keys that differ only in Unicode normalisation are two questions: each answer
    /// takes its own question's text, never the other's.
    @Test func keysAreMatchedByTheirScalars() throws {
        let steps = try [
            #"{"type":"question","resultType":"text","key":"caf\u00e9","title":"Composed"}"#,
            #"{"type":"question","resultType":"text","key":"cafe\u0301","title":"Decomposed"}"#,
        ].map(FHIRSamples.step)
        let design = ActivityDesign(type: .questionnaire, metadata: ActivityMetadata(activityId: "survey"), steps: steps)
        let results = [
            FHIRSamples.result("text", "cafe\u{301}", .string("second")), FHIRSamples.result("text", "caf\u{e9}", .string("first")),
        ]
        let items = QuestionnaireResponseMapping.questionnaireResponse(FHIRSamples.response(results, design: design), naming: FHIRSamples.naming)
            .resource["item"]?.elements ?? []
        #expect(items.count == 2)
        #expect(items.map { $0["text"]?.text ?? "" } == ["Decomposed", "Composed"])
    }

    /// `instant` is worked out by plain arithmetic for speed. From 1583 on it must say what
    /// Foundation's ISO 8601 format says of the same millisecond (given its middle: a double's
    /// nearest value to a millisecond's start can fall just below it); before, Foundation turns
    /// Julian, and ISO 8601 and FHIR stay proleptic Gregorian, which Python's `datetime` gives for
    /// the pinned values. The rest of the millisecond is cut off, never rounded up into the next.
    @Test func instantsAreWhatFoundationFormats() {
        var generator = SystemRandomNumberGenerator()
        var dates = [0, -1, 0.999, -0.001, 951_782_400, 4_107_542_399.999, -12_212_553_600, 253_402_300_799.999, 1_780_000_000.123]
            .map(Date.init(timeIntervalSince1970:))
        for _ in 0..<2_000 {
            dates.append(Date(timeIntervalSince1970: Double(Int64.random(in: -12_212_553_600_000..<253_402_300_800_000, using: &generator)) / 1000))
        }
        #expect(dates.count == 2_009)
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for date in dates {
            let middle = Date(timeIntervalSince1970: ((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down) + 0.5) / 1000)
            #expect(FHIRJSON.instant(date) == format.format(middle), "\(date.timeIntervalSince1970)")
        }
        #expect(FHIRJSON.instant(Date(timeIntervalSince1970: 1_780_000_000.1239)) == "2026-05-28T20:26:40.123Z", "cut off")
        #expect(FHIRJSON.instant(Date(timeIntervalSince1970: 1_780_000_000.123)) == "2026-05-28T20:26:40.123Z", "a double just below")
        #expect(FHIRJSON.instant(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00.000Z")
        #expect(FHIRJSON.instant(Date(timeIntervalSince1970: -30_610_224_000.001)) == "0999-12-31T23:59:59.999Z")
        #expect(FHIRJSON.instant(Date(timeIntervalSince1970: -12_219_292_800)) == "1582-10-15T00:00:00.000Z", "the first Gregorian day")
    }

    /// Canonical URLs are URIs: an activity id in any script is percent-encoded as UTF-8, never
    /// left as letters a URI does not hold.
    @Test func canonicalURLsAreASCII() {
        let url = FHIRSamples.naming.questionnaireURL(studyId: "FHIR_STUDY", activityId: "caf\u{e9} \u{65e5}")
        #expect(url == "https://studies.example.org/fhir/r4/Questionnaire/FHIR.STUDY/caf%C3%A9%20%E6%97%A5")
    }
}
