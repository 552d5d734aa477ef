import JSONText
import StudyModels

/// Builds a questionnaire's items from an activity's steps, and the `enableWhen` conditions its
/// branching implies; collects what it cannot say.
struct ItemBuilder {
    let source: QuestionnaireVersion
    let naming: FHIRNaming
    private(set) var notMapped: [NotMapped] = []
    /// The linkId and step of every question a condition may name, by step key.
    private var questions: [String: (linkId: String, step: ActivityStep)] = [:]

    init(source: QuestionnaireVersion, naming: FHIRNaming) {
        self.source = source
        self.naming = naming
    }

    var language: String? { source.language }

    mutating func items() -> [JSONValue] {
        let steps = source.design.steps
        for step in steps where step.type == .question { questions[step.key] = (step.key, step) }
        for form in steps where form.type == .form {
            for child in form.steps ?? [] where questions[child.key] == nil { questions[child.key] = (Self.linkId(form: form, child), child) }
        }
        let conditions = branchingConditions(steps)
        return steps.map { step in
            var conditionsOfStep = conditions[step.key] ?? []
            if let rule = step.visibility, let condition = visibilityCondition(rule, of: step.key) { conditionsOfStep.append(condition) }
            return item(step, linkId: step.key, conditions: conditionsOfStep, inForm: nil)
        }
    }

    static func linkId(form: ActivityStep, _ child: ActivityStep) -> String { "\(form.key).\(child.key)" }

    private mutating func note(_ linkId: String, _ reason: String) {
        appendNotMapped(NotMapped(linkId: linkId, reason: reason))
    }

    mutating func appendNotMapped(_ item: NotMapped) { notMapped.append(item) }

    /// The question a condition names, by its step key.
    func question(_ key: String) -> (linkId: String, step: ActivityStep)? { questions[key] }

    private mutating func item(_ step: ActivityStep, linkId: String, conditions: [JSONValue], inForm form: ActivityStep?) -> JSONValue {
        let type = QuestionnaireMapping.itemType(step)
        var children: [JSONValue?] = []
        var extensions: [JSONValue?] = []
        var answerOptions: [JSONValue?] = []
        var initial: [JSONValue?] = []
        var maxLength: Int?
        var repeats: Bool?
        let title = step.title?.text(for: language)
        var text = title
        let help = step.text?.text(for: language)

        switch step.type {
        case .instruction:
            // A display item has no children: its text carries the title and the body.
            text = [title, help].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "\n\n")
        case .form:
            repeats = step.repeatable == true ? true : nil
            children = (step.steps ?? []).map { child in
                var conditions: [JSONValue] = []
                if let rule = child.visibility, let condition = visibilityCondition(rule, of: Self.linkId(form: step, child)) {
                    conditions.append(condition)
                }
                return item(child, linkId: Self.linkId(form: step, child), conditions: conditions, inForm: step)
            }
            if let help, !help.isEmpty { children.insert(display(linkId: "\(linkId).help", text: help, control: "help"), at: 0) }
        case .task:
            children = taskItems(step, linkId: linkId)
            note(linkId, "an active task (\(step.resultType)): its settings are not carried; its results are the group's items")
        case .question:
            if let help, !help.isEmpty, help != title { children.append(display(linkId: "\(linkId).help", text: help, control: "help")) }
            question(step, linkId: linkId, type: type, extensions: &extensions, options: &answerOptions, initial: &initial,
                maxLength: &maxLength, repeats: &repeats, children: &children)
        }
        if step.healthDataKey?.isEmpty == false {
            note(linkId, "the answer may be read from HealthKit (\(step.healthDataKey ?? "")); FHIR has no such source")
        }
        if let group = step.randomGroup { note(linkId, "one of random group '\(group)' is shown each run; FHIR shows every item") }
        let required: Bool? = step.type == .question && step.skippable == false ? true : nil
        return FHIRJSON.object([
            "extension": FHIRJSON.array(extensions),
            "linkId": .string(linkId),
            "text": FHIRJSON.string(text),
            "type": .string(type),
            "enableWhen": FHIRJSON.array(conditions),
            "enableBehavior": conditions.count > 1 ? .string("all") : nil,
            "required": FHIRJSON.bool(required),
            "repeats": FHIRJSON.bool(repeats),
            "maxLength": FHIRJSON.integer(maxLength),
            "answerOption": FHIRJSON.array(answerOptions),
            "initial": FHIRJSON.array(initial),
            "item": FHIRJSON.array(children),
        ])
    }

    private func display(linkId: String, text: String, control: String) -> JSONValue {
        FHIRJSON.object([
            "extension": FHIRJSON.array([FHIRExtension.itemControl(control)]),
            "linkId": .string(linkId), "text": .string(text), "type": .string("display"),
        ])
    }

    private static func value(_ number: Double?, integer: Bool) -> (String, JSONValue)? {
        guard let number, number.isFinite else { return nil }
        return integer ? ("valueInteger", .number(JSONNumber(number.rounded()))) : ("valueDecimal", .number(JSONNumber(number)))
    }

    // swiftlint:disable:next function_parameter_count
    private mutating func question(
        _ step: ActivityStep, linkId: String, type: String, extensions: inout [JSONValue?], options: inout [JSONValue?],
        initial: inout [JSONValue?], maxLength: inout Int?, repeats: inout Bool?, children: inout [JSONValue?]
    ) {
        switch step.format {
        case .scale(let format)?:
            let whole = type == "integer"
            if let (name, value) = Self.value(format.minValue, integer: whole) { extensions.append(FHIRExtension.make(FHIRExtension.minValue, name, value)) }
            if let (name, value) = Self.value(format.maxValue, integer: whole) { extensions.append(FHIRExtension.make(FHIRExtension.maxValue, name, value)) }
            if whole, let step = format.step, step > 0 {
                extensions.append(FHIRExtension.make(FHIRExtension.sliderStepValue, "valueInteger", FHIRJSON.integer(Int(step))))
            } else if format.step != nil, step.responseType == .continuousScale {
                note(linkId, "a continuous scale's step: FHIR's slider step is a whole number")
            }
            if let digits = format.maxFractionDigits {
                extensions.append(FHIRExtension.make(FHIRExtension.maxDecimalPlaces, "valueInteger", FHIRJSON.integer(digits)))
            }
            extensions.append(FHIRExtension.itemControl("slider"))
            if let (name, value) = Self.value(format.default, integer: whole) { initial.append(FHIRJSON.object([name: value])) }
            if let low = format.minDesc?.text(for: language), !low.isEmpty { children.append(display(linkId: "\(linkId).lower", text: low, control: "lower")) }
            if let high = format.maxDesc?.text(for: language), !high.isEmpty { children.append(display(linkId: "\(linkId).upper", text: high, control: "upper")) }
            if format.minImage != nil || format.maxImage != nil { note(linkId, "the images at the ends of the scale") }
        case .choice(let format)?:
            let system = naming.choiceSystem(studyId: source.studyId, activityId: source.activityId, key: step.key)
            options = (format.textChoices ?? []).map { choice in
                guard let value = choice.value else { return nil }
                return FHIRJSON.object([
                    "extension": choice.exclusive == true
                        ? FHIRJSON.array([FHIRExtension.make(FHIRExtension.optionExclusive, "valueBoolean", .bool(true))]) : nil,
                    "valueCoding": coding(system: system, code: value, display: choice.text?.text(for: language)),
                ])
            }
            if (format.textChoices ?? []).contains(where: { $0.value == nil }) { note(linkId, "a choice without a value") }
            if (format.textChoices ?? []).contains(where: { $0.detail != nil || $0.description != nil }) {
                note(linkId, "the choices' detail texts")
            }
            switch step.responseType {
            case .textScale?:
                extensions.append(FHIRExtension.itemControl("slider"))
                if format.default != nil { note(linkId, "the text scale's preselected position") }
            case .valuePicker?: extensions.append(FHIRExtension.itemControl("drop-down"))
            default:
                let multiple = format.selectionStyle == .multiple
                repeats = multiple ? true : nil
                extensions.append(FHIRExtension.itemControl(multiple ? "check-box" : "radio-button"))
            }
            if format.vertical != nil {
                extensions.append(FHIRExtension.make(
                    FHIRExtension.choiceOrientation, "valueCode", .string(format.vertical == true ? "vertical" : "horizontal")))
            }
        case .imageChoice(let format)?:
            let system = naming.choiceSystem(studyId: source.studyId, activityId: source.activityId, key: step.key)
            options = (format.imageChoices ?? []).map { choice in
                choice.value.map { FHIRJSON.object(["valueCoding": coding(system: system, code: $0, display: choice.text?.text(for: language))]) }
            }
            extensions.append(FHIRExtension.itemControl("radio-button"))
            note(linkId, "the choices' images (each choice's text and value are carried)")
        case .numeric(let format)?:
            let whole = type == "integer"
            if let (name, value) = Self.value(format.minValue, integer: whole) { extensions.append(FHIRExtension.make(FHIRExtension.minValue, name, value)) }
            if let (name, value) = Self.value(format.maxValue, integer: whole) { extensions.append(FHIRExtension.make(FHIRExtension.maxValue, name, value)) }
            if let unit = format.unit?.text(for: language), !unit.isEmpty {
                extensions.append(FHIRExtension.make(FHIRExtension.unit, "valueCoding", FHIRJSON.object(["display": .string(unit)])))
            }
            extensions += entryFormat(format.placeholder)
        case .date(let format)?:
            let valueName = type == "date" ? "valueDate" : "valueDateTime"
            let dateOnly = type == "date"
            let convert: (String) -> String? = { dateOnly ? FHIRDates.day($0) : FHIRDates.dateTime($0) }
            let custom = format.dateRange == nil || format.dateRange == "custom"
            if custom, let min = format.minDate.flatMap(convert) { extensions.append(FHIRExtension.make(FHIRExtension.minValue, valueName, .string(min))) }
            if custom, let max = format.maxDate.flatMap(convert) { extensions.append(FHIRExtension.make(FHIRExtension.maxValue, valueName, .string(max))) }
            if !custom { note(linkId, "the date range '\(format.dateRange ?? "")', which is relative to the day it is answered") }
            if let value = format.default.flatMap(convert) { initial.append(FHIRJSON.object([valueName: .string(value)])) }
        case .text(let format)?:
            if let length = format.maxLength, length > 0 { maxLength = length }
            if let pattern = format.validationRegex, !pattern.isEmpty {
                extensions.append(FHIRExtension.make(FHIRExtension.regex, "valueString", .string(pattern)))
            }
            extensions += entryFormat(format.placeholder)
        case .email(let format)?:
            extensions += entryFormat(format.placeholder)
        case .timeInterval?:
            extensions.append(unitOption(code: "s", display: "seconds"))
        case .height(let format)?:
            switch format.measurementSystem {
            case "Metric"?: extensions.append(unitOption(code: "cm", display: "centimetres"))
            case "US"?: extensions.append(unitOption(code: "[in_i]", display: "inches"))
            default:
                extensions.append(unitOption(code: "cm", display: "centimetres"))
                extensions.append(unitOption(code: "[in_i]", display: "inches"))
            }
        case .location?, .empty?, .other?, .fetalKickCounter?, .towerOfHanoi?, .spatialSpanMemory?, nil:
            break
        }
        if step.responseType == .location { note(linkId, "a location: FHIR has no location answer, so it is the text 'latitude,longitude'") }
    }

    /// A field's placeholder as the `entryFormat` extension, when it has one.
    private func entryFormat(_ placeholder: LocalizedText?) -> [JSONValue?] {
        guard let text = placeholder?.text(for: language) else { return [] }
        return [FHIRExtension.make(FHIRExtension.entryFormat, "valueString", FHIRJSON.string(text))]
    }

    private func unitOption(code: String, display: String) -> JSONValue? {
        FHIRExtension.make(FHIRExtension.unitOption, "valueCoding", coding(system: "http://unitsofmeasure.org", code: code, display: display))
    }

    private func coding(system: String, code: String, display: String?) -> JSONValue {
        FHIRJSON.object(["system": .string(system), "code": .string(code), "display": FHIRJSON.string(display)])
    }

    /// The results an active task records, as the apps send them.
    static func taskResults(_ task: TaskType) -> [(key: String, type: String)] {
        switch task {
        case .fetalKickCounter: [("duration", "decimal"), ("count", "integer")]
        case .towerOfHanoi: [("puzzleWasSolved", "boolean"), ("numberOfMoves", "integer")]
        case .spatialSpanMemory: [("score", "integer"), ("numberOfGames", "integer"), ("numberOfFailures", "integer")]
        }
    }

    private func taskItems(_ step: ActivityStep, linkId: String) -> [JSONValue?] {
        guard let task = step.taskType else { return [] }
        return Self.taskResults(task).map { result in
            FHIRJSON.object([
                "linkId": .string("\(linkId).\(result.key)"), "text": .string(result.key), "type": .string(result.type),
                "readOnly": .bool(true),
            ])
        }
    }
}
