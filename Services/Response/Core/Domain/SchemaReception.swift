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

    package init(activityId: String, activityVersion: String, metadata: String, data: String) {
        self.activityId = activityId
        self.activityVersion = activityVersion
        self.metadata = metadata
        self.data = data
    }

    /// What a study's POSTs are read against, worked out once per study event: its ids, and each
    /// module with its activity and the version its responses are filed under.
    package struct Study: Sendable {
        package var studyId: String
        package var protocolStudyId: String?
        package var modules: [(module: JSONValue, activityId: String, version: String?)]

        /// Nil when the study was not imported from a schema protocol.
        package init?(_ event: StudyEvent) {
            guard let source = event.source, source.format == .schema, case .array(let modules)? = source.document["modules"] else {
                return nil
            }
            studyId = event.studyId
            protocolStudyId = source.document["properties"]?["study_id"]?.text
            let versions = Dictionary(event.activities.map { ($0.activityId, $0.label) }, uniquingKeysWith: { first, _ in first })
            self.modules = zip(modules, SchemaImport.activityIds(modules: modules)).map { ($0, $1, versions[$1]) }
        }
    }

    package static func make(_ submission: SchemaSubmission, study: StudyEvent) throws(SchemaSubmission.Problem) -> SchemaReception {
        guard let plan = Study(study) else {
            throw SchemaSubmission.Problem(field: "", message: "study \(study.studyId) takes no schema app data")
        }
        return try make(submission, study: plan)
    }

    package static func make(_ submission: SchemaSubmission, study: Study) throws(SchemaSubmission.Problem) -> SchemaReception {
        let protocolStudyId = study.protocolStudyId
        guard submission.studyId.uppercased() == study.studyId.uppercased() || submission.studyId == protocolStudyId else {
            throw SchemaSubmission.Problem(
                field: "study_id", message: "study_id \(submission.studyId) is not this study's (\(protocolStudyId ?? study.studyId))")
        }
        let modules = study.modules
        let moduleIndex = submission.moduleIndex
        let module = modules.indices.contains(moduleIndex) ? modules[moduleIndex] : nil
        var notes: [String] = []
        let activityId: String
        let version: String
        let results: [JSONValue]
        switch submission.kind {
        case .surveyResponse:
            guard let (moduleValue, moduleActivity, published) = module else {
                throw SchemaSubmission.Problem(
                    field: "module_index", message: "the study's protocol has \(modules.count) modules; there is no module \(moduleIndex)")
            }
            guard let published else {
                throw SchemaSubmission.Problem(
                    field: "module_index", message: "module \(moduleIndex) is no activity of the study's published version")
            }
            if let name = submission.fields["module_name"], let expected = moduleValue["name"]?.text, name != expected {
                notes.append("module_name \"\(name)\" is not module \(moduleIndex)'s name \"\(expected)\"")
            }
            let converted = SchemaAnswers.convert(module: moduleValue, answers: submission.responses ?? [:])
            notes += converted.notes
            (activityId, version, results) = (moduleActivity, published, converted.results)
        case .log:
            if moduleIndex >= 0, module == nil { notes.append("the study's protocol has no module \(moduleIndex)") }
            (activityId, version) = (SchemaLogDesign.activityId, SchemaLogDesign.version)
            results = SchemaLogDesign.results(submission, moduleActivityId: module?.activityId)
        }
        let metadata: JSONValue = .object([
            "source": .string("schema"), "kind": .string(submission.kind.rawValue),
            "fields": .object(JSONObject(submission.fields.mapValues(JSONValue.string))), "notes": .array(notes.map(JSONValue.string)),
        ])
        return SchemaReception(
            // Unsorted: PostgreSQL keeps jsonb in its own order, and sorting costs every POST.
            activityId: activityId, activityVersion: version, metadata: metadata.serialized(sortedKeys: false),
            data: JSONValue.object(["results": .array(results)]).serialized(sortedKeys: false))
    }
}
