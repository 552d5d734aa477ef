import Foundation
import JSONText

/// A response a MyStudies 2.x response server kept as a FHIR `QuestionnaireResponse` (its
/// `enableFhirApi` setting holding `fhir`, with `discardFhirAfterDid` false: it then writes the
/// FHIR store `FHIR_{studyId}` of the Cloud Healthcare dataset named after the study, instead of
/// Firestore), taken back into the fields the Firestore documents hold, so that the import reads
/// both alike (`MyStudiesStoredResponse`, `MyStudiesAppResponse.rebuild`).
///
/// What that server wrote, and so what comes back: the participant, site, activity and run in the
/// resource's `identifier` (`studyId@siteId@participantId@activityId@runId`); each step an `item`
/// (`linkId` its key, `definition` its result type) with its answers (`valueInteger`,
/// `valueDecimal`, `valueBoolean`, `valueTime`, `valueDateTime`, `valueString`), a form's answers
/// as the items within it, a task's results as the items within its answer; the activity version
/// in the `Questionnaire` it points to (the reader looks it up); when it was stored in the
/// resource's `meta.lastUpdated`. What it did not keep cannot come back: an answer's start and
/// end, a skip (a step without an answer is read as skipped), a scale's fraction (it kept whole
/// numbers), and which text of a choice question was an "other" option's (each became one more
/// text answer).
public enum MyStudiesFHIRResponse {
    /// Why a resource cannot be read as a response.
    public struct Refusal: Error, Sendable, Equatable {
        public var message: String
    }

    /// The identifier's five parts.
    public struct Identity: Sendable, Equatable {
        public var studyId: String
        public var siteId: String
        public var participantId: String
        public var activityId: String
        public var runId: String
    }

    public static func identity(_ resource: JSONValue) -> Identity? {
        guard let value = resource["identifier"]?["value"]?.string ?? resource["identifier"]?.array?.first?["value"]?.string else { return nil }
        let parts = value.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, !parts[0].isEmpty, !parts[2].isEmpty, !parts[3].isEmpty else { return nil }
        return Identity(studyId: parts[0], siteId: parts[1], participantId: parts[2], activityId: parts[3], runId: parts[4])
    }

    /// The `Questionnaire` the response answers, as `(id, versionId)`, from the reference that
    /// server wrote (`/fhirStores/FHIR_{studyId}/fhir/Questionnaire/{id}/_history/{versionId}`).
    /// Ids are FHIR ids (letters, digits, `-` and `.`, at most 64), and neither `.` nor `..`, so
    /// neither can name another path.
    public static func questionnaire(_ resource: JSONValue) -> (id: String, versionId: String)? {
        guard let reference = resource["questionnaire"]?.string else { return nil }
        let parts = reference.split(separator: "/").map(String.init)
        guard parts.count >= 4, parts[parts.count - 2] == "_history", parts[parts.count - 4] == "Questionnaire" else { return nil }
        let id = parts[parts.count - 3], versionId = parts[parts.count - 1]
        guard isFHIRId(id), isFHIRId(versionId) else { return nil }
        return (id, versionId)
    }

    static func isFHIRId(_ text: String) -> Bool {
        text != "." && text != ".." && (1...64).contains(text.unicodeScalars.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
    }

    /// The fields a Firestore document of the same response holds, as far as the resource says
    /// them; `version` is the activity version of the questionnaire it answers.
    public static func fields(_ resource: JSONValue, version: String) -> Result<JSONValue, Refusal> {
        guard resource["resourceType"]?.string == "QuestionnaireResponse" else { return .failure(Refusal(message: "it is not a QuestionnaireResponse")) }
        guard let identity = identity(resource) else {
            return .failure(Refusal(message: "its identifier is not studyId@siteId@participantId@activityId@runId"))
        }
        let task = resource["identifier"]?["type"]?["text"]?.string == "task"
        let results = (resource["item"]?.array ?? []).map { step($0, task: task) }
        var pairs: [(String, JSONValue)] = [
            ("studyId", .string(identity.studyId)), ("activityId", .string(identity.activityId)), ("activityRunId", .string(identity.runId)),
            ("version", .string(version)), ("results", .array(results)), ("participantId", .string(identity.participantId)),
            ("siteId", .string(identity.siteId)),
        ]
        if let stored = resource["meta"]?["lastUpdated"]?.string.flatMap(instant) {
            pairs.append(("createdTimestamp", .string(String(Int64((stored.timeIntervalSince1970 * 1000).rounded())))))
        }
        return .success(.object(JSONObject(pairs: pairs)))
    }

    /// One item as the step result the app sent.
    static func step(_ item: JSONValue, task: Bool) -> JSONValue {
        let resultType = item["definition"]?.string ?? ""
        let answers = item["answer"]?.array ?? []
        let value: JSONValue
        switch resultType.lowercased() {
        case "grouped":
            // A form: the items within it, one repetition.
            let inner = (item["item"]?.array ?? []).map { step($0, task: false) }
            value = inner.isEmpty ? .null : .array([.array(inner)])
        case "textchoice":
            let texts = answers.compactMap { $0["valueString"] }
            value = texts.isEmpty ? .null : .array(texts)
        case _ where task && answers.first?["item"]?.array?.isEmpty == false:
            // A task: its results are the items within its answer.
            value = .array((answers.first?["item"]?.array ?? []).map { step($0, task: false) })
        default:
            value = answers.first.map(answer) ?? .null
        }
        return .object(JSONObject(pairs: [
            ("resultType", .string(resultType)), ("key", .string(item["linkId"]?.string ?? "")), ("skipped", .bool(value == .null)), ("value", value),
        ]))
    }

    /// An answer's value as the app sent it: a date and time with its offset as the apps write
    /// one (`+0000`, not `+00:00` or `Z`).
    static func answer(_ answer: JSONValue) -> JSONValue {
        for name in ["valueInteger", "valueDecimal", "valueBoolean", "valueTime", "valueDate", "valueString"] {
            if let value = answer[name], value != .null { return value }
        }
        if let text = answer["valueDateTime"]?.string {
            var scalars = Array(text.unicodeScalars)
            if scalars.last == "Z" {
                scalars.removeLast()
                scalars += "+0000".unicodeScalars
            } else if scalars.count >= 6, scalars[scalars.count - 3] == ":", ["+", "-"].contains(scalars[scalars.count - 6]) {
                scalars.remove(at: scalars.count - 3)
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        }
        return .null
    }

    /// `lastUpdated` (`2026-10-01T16:00:00.123456+00:00`): an instant with a fraction of any length.
    static func instant(_ text: String) -> Date? {
        WireInstants.instant(text)
    }
}
