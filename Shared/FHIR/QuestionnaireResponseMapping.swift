import Foundation
import JSONText
import StudyModels

/// One stored response, as the FHIR API shows it.
public struct StoredResponse: Sendable {
    public var id: Int64
    public var studyId: String
    /// The participant's id in the study (the `ParticipantId` of the study's tables).
    public var participantId: Int64
    public var activityId: String
    public var version: String
    public var runId: String?
    /// The app's `data`: `results`, and the run's `startTime` and `endTime`.
    public var data: JSONValue
    public var receivedAt: Date
    /// The design the response answers, when it is known; answers are typed by it.
    public var design: ActivityDesign?
    public var language: String?

    public init(
        id: Int64, studyId: String, participantId: Int64, activityId: String, version: String, runId: String?, data: JSONValue,
        receivedAt: Date, design: ActivityDesign?, language: String? = nil
    ) {
        self.id = id
        self.studyId = studyId
        self.participantId = participantId
        self.activityId = activityId
        self.version = version
        self.runId = runId
        self.data = data
        self.receivedAt = receivedAt
        self.design = design
        self.language = language
    }
}

/// A stored response as a FHIR `QuestionnaireResponse`: its `questionnaire` is the exact version
/// answered (`url|version`), its subject and source the participant's `Patient`, its identifier
/// the run, and every answer typed as the question's item is (docs/fhir.md).
public enum QuestionnaireResponseMapping {
    public struct Result: Sendable {
        public var resource: JSONValue
        /// Results that had no FHIR reading (a value of the wrong shape), by linkId.
        public var notMapped: [NotMapped]
    }

    /// When the participant finished the run, as the app wrote it (its end, or when it was
    /// submitted), with its offset; when it was received, if the app wrote neither.
    public static func authored(_ response: StoredResponse) -> String {
        [response.data["endTime"], response.data["submittedTime"]].compactMap { $0?.text }.lazy
            .compactMap(FHIRDates.dateTime).first(where: { $0.count > 10 }) ?? FHIRJSON.instant(response.receivedAt)
    }

    /// One response on its own (a read); pages and exports keep a `Mappers` for their responses.
    public static func questionnaireResponse(_ response: StoredResponse, naming: FHIRNaming) -> Result {
        QuestionnaireResponseMapper(for: response, naming: naming).map(response)
    }

    /// The mappers of the versions and languages a page or an export meets, each prepared once.
    public struct Mappers: Sendable {
        public let naming: FHIRNaming
        /// A page meets a few versions; an export of a study every one, each in a few languages.
        /// Past this many the oldest is dropped, so a study of many versions bounds the memory.
        public static let capacity = 256
        private var prepared: [ScalarKey: QuestionnaireResponseMapper] = [:]
        private var order: [ScalarKey] = []

        public init(naming: FHIRNaming) {
            self.naming = naming
        }

        public mutating func map(_ response: StoredResponse) -> Result {
            let key = ScalarKey([response.studyId, response.activityId, response.version, response.language ?? ""].joined(separator: "\u{0}"))
            if let mapper = prepared[key] { return mapper.map(response) }
            let mapper = QuestionnaireResponseMapper(for: response, naming: naming)
            if order.count >= Self.capacity { prepared[order.removeFirst()] = nil }
            prepared[key] = mapper
            order.append(key)
            return mapper.map(response)
        }
    }
}

/// The design of one activity version, in one language, made ready to map its responses: what
/// every response of it shares (each question's text, item type, choice system and displays, the
/// canonical reference) is worked out once, so a response costs only its answers.
public struct QuestionnaireResponseMapper: Sendable {
    let naming: FHIRNaming
    let studyId: String
    let activityId: String
    let questionnaire: JSONValue
    let runSystem: JSONValue
    let steps: PreparedSteps

    public init(for response: StoredResponse, naming: FHIRNaming) {
        self.naming = naming
        studyId = response.studyId
        activityId = response.activityId
        questionnaire = .string("\(naming.questionnaireURL(studyId: response.studyId, activityId: response.activityId))|\(response.version)")
        runSystem = .string(naming.runSystem(studyId: response.studyId))
        steps = PreparedSteps(
            response.design?.steps ?? [], language: response.language,
            choiceSystem: { naming.choiceSystem(studyId: response.studyId, activityId: response.activityId, key: $0) })
    }

    /// `response`, which must answer this mapper's version in its language.
    public func map(_ response: StoredResponse) -> QuestionnaireResponseMapping.Result {
        var builder = AnswerBuilder()
        let results: [JSONValue] = if case .array(let results)? = response.data["results"] { results } else { [] }
        let items = builder.items(results, steps: steps, prefix: nil)
        let authored = QuestionnaireResponseMapping.authored(response)
        let patient = FHIRJSON.object(["reference": .string("Patient/\(response.participantId)")])
        let resource = FHIRJSON.object([
            "resourceType": .string("QuestionnaireResponse"),
            "id": .string(String(response.id)),
            "meta": FHIRJSON.meta(versionId: "1", lastUpdated: response.receivedAt),
            "identifier": response.runId.map { run in
                FHIRJSON.object(["system": runSystem, "value": .string("\(response.participantId)/\(response.activityId)/\(run)")])
            },
            "questionnaire": questionnaire,
            "status": .string("completed"),
            "subject": patient,
            "authored": .string(authored),
            "source": patient,
            "item": FHIRJSON.array(items),
        ])
        return QuestionnaireResponseMapping.Result(resource: resource, notMapped: builder.notMapped)
    }
}

/// A design's steps by key (their Unicode scalars: two keys that differ only in normalisation
/// stay two; the first step of a key is the one answered), each with what its answers share.
struct PreparedSteps: Sendable {
    struct Step: Sendable {
        var resultType: String
        var text: JSONValue?
        /// The FHIR item type of the step's answers; nil when the design does not say.
        var itemType: String?
        var choiceSystem: JSONValue
        /// Each choice value's display text.
        var displays: [ScalarKey: JSONValue]
        var children: PreparedSteps
    }

    private(set) var byKey: [ScalarKey: Step] = [:]

    static let none = PreparedSteps()

    private init() {}

    /// `choiceSystem` names the code system of a question's choices by its key: the key of the
    /// question itself, also within a form.
    init(_ steps: [ActivityStep], language: String?, choiceSystem: (String) -> String, depth: Int = 0) {
        guard depth < AnswerBuilder.maxDepth else { return }
        for step in steps where byKey[ScalarKey(step.key)] == nil {
            var displays: [ScalarKey: JSONValue] = [:]
            for choice in QuestionnaireMapping.choices(step, language: language) where displays[ScalarKey(choice.value)] == nil {
                displays[ScalarKey(choice.value)] = FHIRJSON.string(choice.text) ?? .null
            }
            byKey[ScalarKey(step.key)] = Step(
                resultType: step.resultType, text: FHIRJSON.string(step.title?.text(for: language)),
                itemType: QuestionnaireMapping.itemType(step), choiceSystem: .string(choiceSystem(step.key)), displays: displays,
                children: PreparedSteps(step.steps ?? [], language: language, choiceSystem: choiceSystem, depth: depth + 1))
        }
    }

    /// A task's results, typed by key (a task has no steps for them).
    init(task: TaskType) {
        for (key, type) in ItemBuilder.taskResults(task) {
            byKey[ScalarKey(key)] = Step(
                resultType: "", text: nil, itemType: type, choiceSystem: .null, displays: [:], children: .none)
        }
    }

    subscript(key: String) -> Step? { byKey[ScalarKey(key)] }
}

/// Builds the answered items of a response from the app's results.
struct AnswerBuilder {
    private(set) var notMapped: [NotMapped] = []

    /// Repeated groups and lists are bounded where the response was received (its node budget);
    /// this bounds the depth of groups within groups, which a design never nests past two.
    static let maxDepth = 4

    mutating func items(_ results: [JSONValue], steps: PreparedSteps, prefix: String?, depth: Int = 0) -> [JSONValue] {
        guard depth < Self.maxDepth else { return [] }
        var built: [JSONValue] = []
        for result in results {
            guard let key = result["key"]?.text, !key.isEmpty else { continue }
            let linkId = prefix.map { "\($0).\(key)" } ?? key
            guard result["skipped"] != .bool(true), let value = result["value"], value != .null else { continue }
            let step = steps[key]
            let resultType = result["resultType"]?.text ?? step?.resultType ?? ""
            switch resultType {
            case "grouped":
                // One list of results per repetition of the form.
                let repetitions: [[JSONValue]] =
                    if case .array(let elements) = value {
                        elements.allSatisfy({ if case .object = $0 { true } else { false } })
                            ? [elements] : elements.compactMap { if case .array(let inner) = $0 { inner } else { nil } }
                    } else { [] }
                for repetition in repetitions {
                    let children = items(repetition, steps: step?.children ?? .none, prefix: linkId, depth: depth + 1)
                    guard !children.isEmpty else { continue }
                    built.append(FHIRJSON.object(["linkId": .string(linkId), "text": step?.text, "item": .array(children)]))
                }
            case "fetalKickCounter", "towerOfHanoi", "spatialSpanMemory":
                guard case .array(let inner) = value else {
                    notMapped.append(NotMapped(linkId: linkId, reason: "a task result that is not a list of results"))
                    continue
                }
                let results = TaskType(rawValue: resultType).map { PreparedSteps(task: $0) } ?? .none
                let children = items(inner, steps: results, prefix: linkId, depth: depth + 1)
                guard !children.isEmpty else { continue }
                built.append(FHIRJSON.object(["linkId": .string(linkId), "text": step?.text, "item": .array(children)]))
            default:
                let answers = Self.answers(value, resultType: resultType, step: step)
                guard !answers.isEmpty else {
                    notMapped.append(NotMapped(linkId: linkId, reason: "a \(resultType) answer of an unexpected shape"))
                    continue
                }
                built.append(FHIRJSON.object(["linkId": .string(linkId), "text": step?.text, "answer": .array(answers)]))
            }
        }
        return built
    }

    private static func answers(_ value: JSONValue, resultType: String, step: PreparedSteps.Step?) -> [JSONValue] {
        func one(_ name: String, _ value: JSONValue?) -> [JSONValue] {
            value.map { [FHIRJSON.object([name: $0])] } ?? []
        }
        let itemType = step?.itemType
        switch resultType {
        case "scale", "continuousScale", "numeric":
            guard case .number(let number) = value else { return [] }
            let whole = number.isWhole && abs(number.double) < 1e15
            let integer = whole && (itemType == "integer" || (itemType == nil && resultType == "scale"))
            return one(integer ? "valueInteger" : "valueDecimal", value)
        case "timeInterval", "height":
            guard case .number = value else { return [] }
            let (code, unit) = resultType == "height" ? ("cm", "cm") : ("s", "s")
            return one("valueQuantity", FHIRJSON.object([
                "value": value, "unit": .string(unit), "system": .string("http://unitsofmeasure.org"), "code": .string(code),
            ]))
        case "boolean":
            guard case .bool = value else { return [] }
            return one("valueBoolean", value)
        case "timeOfDay":
            return one("valueTime", value.text.flatMap(FHIRDates.time).map(JSONValue.string))
        case "date":
            guard let text = value.text else { return [] }
            if itemType == "date" { return one("valueDate", FHIRDates.day(text).map(JSONValue.string)) }
            return one("valueDateTime", FHIRDates.dateTime(text).map(JSONValue.string))
        case "textScale", "valuePicker", "imageChoice", "textChoice":
            let selections: [JSONValue] = if case .array(let values) = value { values } else { [value] }
            return selections.flatMap { selection -> [JSONValue] in
                if case .object = selection {
                    // An "other" choice: its value, and the text the participant typed.
                    return one("valueCoding", selection["other"]?.text.map { coding($0, step: step) })
                        + one("valueString", FHIRJSON.string(selection["text"]?.text))
                }
                return one("valueCoding", selection.text.map { coding($0, step: step) })
            }
        default:
            guard case .string(let text) = value, !text.isEmpty else { return [] }
            return one("valueString", .string(text))
        }
    }

    private static func coding(_ code: String, step: PreparedSteps.Step?) -> JSONValue {
        // A question the design does not know has no code system: the code is the app's value alone.
        FHIRJSON.object([
            "system": step?.choiceSystem, "code": .string(code), "display": step?.displays[ScalarKey(code)],
        ])
    }
}
