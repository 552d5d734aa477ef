import Foundation
import StudyModels
import Testing

/// The activity model itself: every response type's format, translations, branching.
@Suite struct ActivityModelTests {
    /// One question of each of the 15 response types, with every format field set.
    static let everyResponseType: [ActivityStep] = {
        func question(_ type: ResponseType, _ format: StepFormat?) -> ActivityStep {
            var step = ActivityStep(type: .question, resultType: type.rawValue, key: type.rawValue + "Q")
            step.title = LocalizedText(translations: ["en": "Question \(type.rawValue)", "es": "Pregunta \(type.rawValue)"])
            step.format = format
            return step
        }
        let choices = [
            TextChoice(text: "Yes", value: "1", detail: "Sure", exclusive: false),
            TextChoice(
                text: LocalizedText(translations: ["en": "Other", "es": "Otro"]), value: "other",
                other: OtherOption(placeholder: "Tell us", isMandatory: true, textfieldReq: true)),
        ]
        return [
            question(.scale, .scale(ScaleFormat(maxValue: 10, minValue: 0, step: 1, default: 5, vertical: false,
                maxDesc: "Most", minDesc: "Least", maxImage: "aW1n", minImage: "aW1n"))),
            question(.continuousScale, .scale(ScaleFormat(maxValue: 1, minValue: 0, default: 0.5, maxFractionDigits: 2))),
            question(.textScale, .choice(ChoiceFormat(textChoices: choices, default: 1, vertical: true))),
            question(.valuePicker, .choice(ChoiceFormat(textChoices: choices))),
            question(.imageChoice, .imageChoice(ImageChoiceFormat(imageChoices: [
                ImageChoice(image: "aW1n", selectedImage: "c2Vs", text: "Sun", value: "sun")]))),
            question(.textChoice, .choice(ChoiceFormat(textChoices: choices, selectionStyle: .multiple))),
            question(.boolean, nil),
            question(.numeric, .numeric(NumericFormat(style: .decimal, unit: "kg", minValue: 0, maxValue: 300, placeholder: "Weight"))),
            question(.timeOfDay, nil),
            question(.date, .date(DateFormat(style: .dateTime, minDate: "2026-01-01T00:00:00.000-0500",
                maxDate: "2027-01-01T00:00:00.000-0500", default: "2026-06-01T00:00:00.000-0400", dateRange: "custom"))),
            question(.text, .text(TextFormat(maxLength: 250, validationRegex: "^[a-z]+$", invalidMessage: "Letters only",
                multipleLines: true, placeholder: "Type here"))),
            question(.email, .email(EmailFormat(placeholder: "you@example.org"))),
            question(.timeInterval, .timeInterval(TimeIntervalFormat(default: 3600, step: 5))),
            question(.height, .height(HeightFormat(measurementSystem: "Metric", placeholder: "Height"))),
            question(.location, .location(LocationFormat(useCurrentLocation: true))),
        ]
    }()

    @Test func everyResponseTypeRoundTripsThroughJSON() throws {
        #expect(Set(Self.everyResponseType.compactMap(\.responseType)) == Set(ResponseType.allCases))
        let design = ActivityDesign(
            type: .questionnaire, metadata: ActivityMetadata(activityId: "AllTypes"), steps: Self.everyResponseType)
        let decoded = try JSONDecoder().decode(ActivityDesign.self, from: JSONEncoder().encode(design))
        #expect(decoded == design)
    }

    @Test func servesTheRequestedLanguageWithEnglishAsFallback() throws {
        let design = ActivityDesign(
            type: .questionnaire, metadata: ActivityMetadata(activityId: "AllTypes", name: LocalizedText(translations: ["en": "Daily", "es": "Diario"])),
            steps: Self.everyResponseType)
        let spanish = design.served(language: "es")
        #expect(spanish.metadata.name == "Diario")
        #expect(spanish.steps[0].title == "Pregunta scale")
        guard case .choice(let format)? = spanish.steps[5].format else {
            Issue.record("textChoice format lost")
            return
        }
        #expect(format.textChoices?[1].text == "Otro")
        // Not translated: English.
        #expect(format.textChoices?[0].text == "Yes")
        #expect(format.textChoices?[1].other?.placeholder == "Tell us")
        let french = design.served(language: "fr")
        #expect(french.steps[0].title == "Question scale")
        // What the apps receive is plain strings.
        let json = String(decoding: try JSONEncoder().encode(spanish), as: UTF8.self)
        #expect(!json.contains("\"es\""))
    }

    /// A date question is served with `minDate`, `maxDate` and `default` always there, empty when
    /// unset, and `dateRange` `custom` when unset, as the original servers sent them: the iOS app
    /// force-unwraps each (`ActivityQuestionStep`), so one left out would end the app.
    @Test func aDateQuestionIsServedWithEveryMemberTheIOSAppUnwraps() throws {
        var bare = ActivityStep(type: .question, resultType: "date", key: "when")
        bare.format = .date(DateFormat(style: .date))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(bare.served(language: nil))) as? [String: Any]
        let format = try #require(json?["format"] as? [String: Any])
        #expect(format["minDate"] as? String == "" && format["maxDate"] as? String == "" && format["default"] as? String == "")
        #expect(format["dateRange"] as? String == "custom" && format["style"] as? String == "Date")
        let given = DateFormat(
            style: .dateTime, minDate: "2017-01-13T03:34:28.000-0400", maxDate: "2017-12-13T03:34:28.000-0400",
            default: "2017-06-13T03:34:28.000-0400", dateRange: "untilCurrent")
        var step = bare
        step.format = .date(given)
        #expect(step.served(language: nil).format == .date(given))
    }

    @Test func localizedTextDecodesBothForms() throws {
        let plain = try JSONDecoder().decode(LocalizedText.self, from: Data(#""Hello""#.utf8))
        #expect(plain == "Hello")
        let translated = try JSONDecoder().decode(LocalizedText.self, from: Data(#"{"en":"Hello","es":"Hola"}"#.utf8))
        #expect(translated.text(for: "es") == "Hola")
        #expect(translated.text(for: "ES") == "Hola")
        #expect(translated.text(for: nil) == "Hello")
        #expect(String(decoding: try JSONEncoder().encode(plain), as: UTF8.self) == #""Hello""#)
    }

    @Test func destinationsKeepConditionsAndOperators() throws {
        let data = Data(#"[{"condition":"","destination":"end"},{"condition":5,"operator":">=","destination":"high"},{"condition":"yes","destination":""}]"#.utf8)
        let destinations = try JSONDecoder().decode([Destination].self, from: data)
        #expect(destinations[0] == Destination(destination: "end"))
        #expect(destinations[1].condition == "5")
        #expect(destinations[1].numericOperator == .greaterOrEqual)
        #expect(destinations[2].destination == "")
    }

    /// Both apps compare a numeric answer by `gt lt e ne gte lte` only (the iOS app's
    /// `OperatorType(rawValue:)!` traps on anything else): a design using the symbols is served
    /// with those names, and a design the original servers wrote (`gte`, `lt`) reads as it is.
    @Test func numericBranchingIsServedByTheNamesTheAppsCompare() throws {
        let symbols = ["<": "lt", ">": "gt", "=": "e", "!=": "ne", ">=": "gte", "<=": "lte"]
        #expect(symbols.count == Destination.Operator.allCases.count)
        for (symbol, name) in symbols {
            var step = ActivityStep(type: .question, resultType: ResponseType.numeric.rawValue, key: "count")
            step.destinations = [
                Destination(condition: "5", operator: symbol, destination: "next"), Destination(destination: ""),
            ]
            let served = try #require(step.served(language: nil).destinations)
            #expect(served.count == 2)
            #expect(served[0].operator == name)
            #expect(served[1].operator == "")
            #expect(Destination.Operator(named: name)?.symbol == symbol)
        }
        #expect(Destination.Operator(named: "range") == nil)
        #expect(Destination.Operator(named: "GTE") == nil)
    }
}
