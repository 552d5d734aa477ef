import Foundation
import JSONText
import StudyModels

/// One published version of an activity, as the FHIR API shows it.
public struct QuestionnaireVersion: Sendable {
    public var studyId: String
    public var activityId: String
    public var version: String
    public var design: ActivityDesign
    /// The language the texts are given in (the study's default when nil).
    public var language: String?
    public var publishedAt: Date?
    /// A later version of the study removed the activity, or the study closed.
    public var retired: Bool

    public init(
        studyId: String, activityId: String, version: String, design: ActivityDesign, language: String? = nil,
        publishedAt: Date? = nil, retired: Bool = false
    ) {
        self.studyId = studyId
        self.activityId = activityId
        self.version = version
        self.design = design
        self.language = language
        self.publishedAt = publishedAt
        self.retired = retired
    }
}

/// What a questionnaire could not carry of a design, at the item it concerns.
public struct NotMapped: Sendable, Equatable, Codable, CustomStringConvertible {
    public var linkId: String
    public var reason: String

    public init(linkId: String, reason: String) {
        self.linkId = linkId
        self.reason = reason
    }

    public var description: String { "\(linkId): \(reason)" }
}

/// An activity's design as a FHIR `Questionnaire` (docs/fhir.md has the table of every step
/// type). What FHIR cannot say is listed in `notMapped` and in the resource itself, under the
/// extension `notMappedExtension`, never dropped without a word.
public enum QuestionnaireMapping {
    public struct Result: Sendable {
        public var resource: JSONValue
        public var notMapped: [NotMapped]
    }

    /// The extension (on the Questionnaire) that lists what the design had and FHIR could not say.
    public static func notMappedExtension(_ naming: FHIRNaming) -> String { "\(naming.base)/StructureDefinition/not-mapped" }

    public static func questionnaire(_ source: QuestionnaireVersion, naming: FHIRNaming) -> Result {
        var builder = ItemBuilder(source: source, naming: naming)
        let items = builder.items()
        let name = source.activityId.prefix(1).uppercased() + source.activityId.dropFirst()
        let notMapped = builder.notMapped
        let resource = FHIRJSON.object([
            "resourceType": .string("Questionnaire"),
            "id": .string(FHIRId.questionnaire(studyId: source.studyId, activityId: source.activityId, version: source.version)),
            "meta": FHIRJSON.meta(versionId: "1", lastUpdated: source.publishedAt),
            "extension": FHIRJSON.array(notMapped.map {
                FHIRExtension.make(notMappedExtension(naming), "valueString", .string($0.description))
            }),
            "url": .string(naming.questionnaireURL(studyId: source.studyId, activityId: source.activityId)),
            "identifier": .array([FHIRJSON.object([
                "use": .string("official"), "system": .string(naming.activitySystem(studyId: source.studyId)),
                "value": .string(source.activityId),
            ])]),
            "version": .string(source.version),
            // que-0 asks for a name usable as an identifier; an activity id that is not one has none.
            "name": isComputable(name) ? .string(name) : nil,
            "title": FHIRJSON.string(source.design.metadata.name?.text(for: source.language)),
            "status": .string(source.retired ? "retired" : "active"),
            "subjectType": .array([.string("Patient")]),
            "date": source.publishedAt.map { .string(FHIRJSON.instant($0)) },
            "useContext": .array([FHIRJSON.object([
                "code": FHIRJSON.object([
                    "system": .string("http://terminology.hl7.org/CodeSystem/usage-context-type"), "code": .string("program"),
                ]),
                "valueReference": FHIRJSON.object(["reference": .string("ResearchStudy/\(FHIRId.study(source.studyId))")]),
            ])]),
            "effectivePeriod": FHIRJSON.object([
                "start": source.design.metadata.startDate.flatMap(FHIRDates.dateTime).map(JSONValue.string),
                "end": source.design.metadata.endDate.flatMap(FHIRDates.dateTime).map(JSONValue.string),
            ]),
            "item": FHIRJSON.array(items),
        ])
        return Result(resource: resource, notMapped: notMapped)
    }

    static func isComputable(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first), name.unicodeScalars.count <= 255 else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// The FHIR item type a question's answers take.
    public static func itemType(_ step: ActivityStep) -> String {
        switch step.type {
        case .instruction: return "display"
        case .form, .task: return "group"
        case .question: break
        }
        switch step.responseType {
        case .scale?: return isWholeScale(step) ? "integer" : "decimal"
        case .continuousScale?: return "decimal"
        case .textScale?, .valuePicker?, .imageChoice?: return "choice"
        case .textChoice?: return hasOther(step) ? "open-choice" : "choice"
        case .boolean?: return "boolean"
        case .numeric?:
            if case .numeric(let format)? = step.format, format.style == .decimal { return "decimal" }
            return "integer"
        case .timeOfDay?: return "time"
        case .date?:
            if case .date(let format)? = step.format, format.style == .dateTime { return "dateTime" }
            return "date"
        case .text?:
            if case .text(let format)? = step.format, format.multipleLines == true { return "text" }
            return "string"
        case .email?, .location?, nil: return "string"
        case .timeInterval?, .height?: return "quantity"
        }
    }

    /// A scale whose bounds and step are whole numbers takes whole answers.
    static func isWholeScale(_ step: ActivityStep) -> Bool {
        guard case .scale(let format)? = step.format else { return true }
        return [format.minValue, format.maxValue, format.step, format.default].allSatisfy { value in
            value.map { $0.rounded() == $0 && abs($0) < 1e9 } ?? true
        }
    }

    static func hasOther(_ step: ActivityStep) -> Bool {
        guard case .choice(let format)? = step.format else { return false }
        return format.textChoices?.contains { $0.other != nil } ?? false
    }

    /// The choices of a choice question: (value, text) in the design's order.
    static func choices(_ step: ActivityStep, language: String?) -> [(value: String, text: String?, exclusive: Bool)] {
        switch step.format {
        case .choice(let format)?:
            return (format.textChoices ?? []).compactMap { choice in
                guard let value = choice.value else { return nil }
                return (value, choice.text?.text(for: language), choice.exclusive == true)
            }
        case .imageChoice(let format)?:
            return (format.imageChoices ?? []).compactMap { choice in
                guard let value = choice.value else { return nil }
                return (value, choice.text?.text(for: language), false)
            }
        default:
            if step.responseType == .boolean { return [("true", nil, false), ("false", nil, false)] }
            return []
        }
    }
}
