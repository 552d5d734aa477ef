import Foundation
import StudyModels

/// What a schema app POST becomes in the response queue (docs/schema-protocols.md, Receiving
/// data): a survey response of its module's activity, its answers as that activity's results; or
/// a page event of the built-in `SchemaLog` list. Read against the study's newest published
/// protocol, as the response service last heard of it.
package struct SchemaReception: Sendable, Equatable {
    package var activityId: String
    package var activityVersion: String
    /// `{"source": "schema", "fields": {...every field as it came}, "notes": [...]}`.
    package var metadata: String
    /// `{"results": [...]}`, as the apps' responses carry them.
    package var data: String

    package static func make(_ submission: SchemaSubmission, study: StudyEvent) throws(SchemaSubmission.Problem) -> SchemaReception {
        guard let source = study.source, source.format == .schema else {
            throw SchemaSubmission.Problem(field: "", message: "study \(study.studyId) takes no schema app data")
        }
        let protocolStudyId = source.document["properties"]?["study_id"]?.text
        guard submission.studyId.uppercased() == study.studyId.uppercased() || submission.studyId == protocolStudyId else {
            throw SchemaSubmission.Problem(
                field: "study_id", message: "study_id \(submission.studyId) is not this study's (\(protocolStudyId ?? study.studyId))")
        }
        guard case .array(let modules)? = source.document["modules"] else {
            throw SchemaSubmission.Problem(field: "", message: "study \(study.studyId) has no protocol modules")
        }
        let activityIds = SchemaImport.activityIds(modules: modules)
        let moduleIndex = submission.moduleIndex
        let module: (JSONValue, String)? = modules.indices.contains(moduleIndex) ? (modules[moduleIndex], activityIds[moduleIndex]) : nil
        var notes: [String] = []
        let activityId: String
        let version: String
        let results: [JSONValue]
        switch submission.kind {
        case .surveyResponse:
            guard let (moduleValue, moduleActivity) = module else {
                throw SchemaSubmission.Problem(
                    field: "module_index", message: "the study's protocol has \(modules.count) modules; there is no module \(moduleIndex)")
            }
            guard let published = study.activities.first(where: { $0.activityId == moduleActivity }) else {
                throw SchemaSubmission.Problem(
                    field: "module_index", message: "module \(moduleIndex) is no activity of the study's published version")
            }
            if let name = submission.fields["module_name"], let expected = moduleValue["name"]?.text, name != expected {
                notes.append("module_name \"\(name)\" is not module \(moduleIndex)'s name \"\(expected)\"")
            }
            let converted = SchemaAnswers.convert(module: moduleValue, answers: submission.responses ?? [:])
            notes += converted.notes
            (activityId, version, results) = (moduleActivity, published.label, converted.results)
        case .log:
            if moduleIndex >= 0, module == nil { notes.append("the study's protocol has no module \(moduleIndex)") }
            (activityId, version) = (SchemaLogDesign.activityId, SchemaLogDesign.version)
            results = SchemaLogDesign.results(submission, moduleActivityId: module?.1)
        }
        let metadata: JSONValue = .object([
            "source": .string("schema"), "kind": .string(submission.kind.rawValue),
            "fields": .object(submission.fields.mapValues(JSONValue.string)), "notes": .array(notes.map(JSONValue.string)),
        ])
        return SchemaReception(
            activityId: activityId, activityVersion: version, metadata: metadata.serialized(sortedKeys: true),
            data: JSONValue.object(["results": .array(results)]).serialized(sortedKeys: true))
    }
}
