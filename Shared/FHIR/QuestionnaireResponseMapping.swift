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

    public static func questionnaireResponse(_ response: StoredResponse, naming: FHIRNaming) -> Result {
        var builder = AnswerBuilder(response: response, naming: naming)
        let results: [JSONValue] = if case .array(let results)? = response.data["results"] { results } else { [] }
        let items = builder.items(results, steps: response.design?.steps ?? [], prefix: nil)
        let authored = [response.data["endTime"], response.data["submittedTime"]].compactMap { $0?.text }.lazy
            .compactMap(FHIRDates.dateTime).first(where: { $0.count > 10 }) ?? FHIRJSON.instant(response.receivedAt)
        let patient = FHIRJSON.object(["reference": .string("Patient/\(response.participantId)")])
        let resource = FHIRJSON.object([
            "resourceType": .string("QuestionnaireResponse"),
            "id": .string(String(response.id)),
            "meta": FHIRJSON.meta(versionId: "1", lastUpdated: response.receivedAt),
            "identifier": response.runId.map { run in
                FHIRJSON.object([
                    "system": .string(naming.runSystem(studyId: response.studyId)),
                    "value": .string("\(response.participantId)/\(response.activityId)/\(run)"),
                ])
            },
            "questionnaire": .string(
                "\(naming.questionnaireURL(studyId: response.studyId, activityId: response.activityId))|\(response.version)"),
            "status": .string("completed"),
            "subject": patient,
            "authored": .string(authored),
            "source": patient,
            "item": FHIRJSON.array(items),
        ])
        return Result(resource: resource, notMapped: builder.notMapped)
    }
}

/// Builds the answered items of a response from the app's results.
struct AnswerBuilder {
    let response: StoredResponse
    let naming: FHIRNaming
    private(set) var notMapped: [NotMapped] = []

    /// Repeated groups and lists are bounded where the response was received (its node budget);
    /// this bounds the depth of groups within groups, which a design never nests past two.
    static let maxDepth = 4

    /// `taskTypes` types a task's results by key (a task has no steps for them).
    mutating func items(
        _ results: [JSONValue], steps: [ActivityStep], prefix: String?, taskTypes: [String: String] = [:], depth: Int = 0
    ) -> [JSONValue] {
        guard depth < Self.maxDepth else { return [] }
        var built: [JSONValue] = []
        for result in results {
            guard let key = result["key"]?.text, !key.isEmpty else { continue }
            let linkId = prefix.map { "\($0).\(key)" } ?? key
            guard result["skipped"] != .bool(true), let value = result["value"], value != .null else { continue }
            let step = steps.first { $0.key == key }
            let resultType = result["resultType"]?.text ?? step?.resultType ?? ""
            let text = step?.title?.text(for: response.language)
            switch resultType {
            case "grouped":
                // One list of results per repetition of the form.
                let repetitions: [[JSONValue]] =
                    if case .array(let elements) = value {
                        elements.allSatisfy({ if case .object = $0 { true } else { false } })
                            ? [elements] : elements.compactMap { if case .array(let inner) = $0 { inner } else { nil } }
                    } else { [] }
                for repetition in repetitions {
                    let children = items(repetition, steps: step?.steps ?? [], prefix: linkId, depth: depth + 1)
                    guard !children.isEmpty else { continue }
                    built.append(FHIRJSON.object(["linkId": .string(linkId), "text": FHIRJSON.string(text), "item": .array(children)]))
                }
            case "fetalKickCounter", "towerOfHanoi", "spatialSpanMemory":
                guard case .array(let inner) = value else {
                    notMapped.append(NotMapped(linkId: linkId, reason: "a task result that is not a list of results"))
                    continue
                }
                let types = TaskType(rawValue: resultType).map { Dictionary(uniqueKeysWithValues: ItemBuilder.taskResults($0)) } ?? [:]
                let children = items(inner, steps: [], prefix: linkId, taskTypes: types, depth: depth + 1)
                guard !children.isEmpty else { continue }
                built.append(FHIRJSON.object(["linkId": .string(linkId), "text": FHIRJSON.string(text), "item": .array(children)]))
            default:
                let answers = self.answers(value, resultType: resultType, step: step, itemType: step.map(QuestionnaireMapping.itemType) ?? taskTypes[key])
                guard !answers.isEmpty else {
                    notMapped.append(NotMapped(linkId: linkId, reason: "a \(resultType) answer of an unexpected shape"))
                    continue
                }
                built.append(FHIRJSON.object(["linkId": .string(linkId), "text": FHIRJSON.string(text), "answer": .array(answers)]))
            }
        }
        return built
    }

    private func answers(_ value: JSONValue, resultType: String, step: ActivityStep?, itemType: String?) -> [JSONValue] {
        func one(_ name: String, _ value: JSONValue?) -> [JSONValue] {
            value.map { [FHIRJSON.object([name: $0])] } ?? []
        }
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

    private func coding(_ code: String, step: ActivityStep?) -> JSONValue {
        let display = step.flatMap { step in
            QuestionnaireMapping.choices(step, language: response.language).first { $0.value == code }?.text
        }
        let key = step?.key ?? ""
        return FHIRJSON.object([
            "system": .string(naming.choiceSystem(studyId: response.studyId, activityId: response.activityId, key: key)),
            "code": .string(code), "display": FHIRJSON.string(display),
        ])
    }
}
