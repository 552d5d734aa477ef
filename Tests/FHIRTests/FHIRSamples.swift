import FHIR
import Foundation
import JSONText
import StudyModels
import TestSupport

/// Designs and responses that exercise every step type, and the example study's activities.
enum FHIRSamples {
    static let naming = FHIRNaming(base: "https://studies.example.org/fhir/r4")

    static var exampleStudy: StudyDocument {
        get throws {
            let url = ServiceProcess.packageRoot.appendingPathComponent("docs/examples/complete-study.json")
            return try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: url))
        }
    }

    /// Each activity of the example study as the app is served it.
    static func exampleDesigns() throws -> [(activityId: String, design: ActivityDesign)] {
        try exampleStudy.activities.map { activity in
            (activity.activityId, ActivityDesign(
                type: activity.type ?? (activity.steps.contains { $0.type == .task } ? .task : .questionnaire),
                metadata: ActivityMetadata(activityId: activity.activityId, name: activity.title, version: "1.0"),
                steps: activity.steps))
        }
    }

    static func step(_ json: String) throws -> ActivityStep {
        try JSONDecoder().decode(ActivityStep.self, from: Data(json.utf8))
    }

    static func questionnaire(_ steps: [ActivityStep], activityId: String = "survey") -> QuestionnaireMapping.Result {
        let design = ActivityDesign(type: .questionnaire, metadata: ActivityMetadata(activityId: activityId, name: "A survey"), steps: steps)
        return QuestionnaireMapping.questionnaire(
            QuestionnaireVersion(studyId: "FHIR_STUDY", activityId: activityId, version: "1.0", design: design,
                publishedAt: Date(timeIntervalSince1970: 1_780_000_000)),
            naming: naming)
    }

    /// The app's result for one answer, as the MyStudies apps send it.
    static func result(_ resultType: String, _ key: String, _ value: JSONValue, skipped: Bool = false) -> JSONValue {
        .object(JSONObject(pairs: [
            ("resultType", .string(resultType)), ("key", .string(key)), ("skipped", .bool(skipped)),
            ("startTime", .string("2026-03-01T08:00:00.000+0100")), ("endTime", .string("2026-03-01T08:01:00.000+0100")),
            ("value", value),
        ]))
    }

    static func response(_ results: [JSONValue], design: ActivityDesign?, activityId: String = "survey", id: Int64 = 7) -> StoredResponse {
        StoredResponse(
            id: id, studyId: "FHIR_STUDY", participantId: 42, activityId: activityId, version: "1.0", runId: "3",
            data: .object(JSONObject(pairs: [
                ("startTime", .string("2026-03-01T08:00:00.000+0100")), ("endTime", .string("2026-03-01T08:05:00.000+0100")),
                ("results", .array(results)),
            ])),
            receivedAt: Date(timeIntervalSince1970: 1_780_000_100), design: design)
    }
}

extension JSONValue {
    /// The item of a Questionnaire or QuestionnaireResponse with `linkId`, at any depth.
    func item(_ linkId: String) -> JSONValue? {
        if self["linkId"]?.text == linkId { return self }
        for key in ["item", "answer"] {
            guard case .array(let children)? = self[key] else { continue }
            for child in children { if let found = child.item(linkId) { return found } }
        }
        return nil
    }

    func extensionValue(_ url: String) -> JSONValue? {
        guard case .array(let extensions)? = self["extension"] else { return nil }
        guard case .object(let members)? = extensions.first(where: { $0["url"]?.text == url }) else { return nil }
        return members.first { $0.key.hasPrefix("value") }?.value
    }

    var elements: [JSONValue] { if case .array(let values) = self { values } else { [] } }
}
