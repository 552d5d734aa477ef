import Foundation
import JSONText
import SageAssessments
import StudyModels

/// A Sage assessment into a study's draft (docs/sage.md): checked, made into an activity, and put
/// in place of the activity it was imported as before, or added. An activity that was not made
/// from an assessment is never replaced by one.
package struct AssessmentImports: Sendable {
    /// Where the activity went, with why the MyStudies apps cannot run it.
    private enum Placement: Sendable {
        case created([ValidationProblem])
        case replaced([ValidationProblem])
        case taken(String)
    }

    package let editing: DraftEditing
    package let schemas: SageSchemaSet

    package init(editing: DraftEditing, schemas: SageSchemaSet) {
        self.editing = editing
        self.schemas = schemas
    }

    /// Imports the assessment text `bytes` as the activity `identifier` of `studyId`'s draft.
    /// The assessment's own problems are located in it; the draft's, in the study document.
    package func importAssessment(
        _ bytes: some Collection<UInt8>, identifier: String, studyId: String, by admin: AuthenticatedAdmin
    ) async throws -> AssessmentImportResult {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes, budget: .activityDocument)
        } catch {
            throw StudyMetadataError.invalid([ValidationProblem(pointer: "", message: error.description)], subject: .assessment)
        }
        var check = AssessmentCheck.check(document, schemas: schemas)
        if document["identifier"]?.string != identifier {
            check.errors.insert(ValidationProblem(pointer: "/identifier", message: "must be \(identifier), the identifier in the address"), at: 0)
        }
        guard check.errors.isEmpty else { throw StudyMetadataError.invalid(check.errors, subject: .assessment) }
        let (warnings, placement) = try await editing.edit(
            studyId: studyId, by: admin, action: "study.assessment_imported", details: ["activityId": identifier],
            madeFrom: "assessment"
        ) { draft -> Placement in
            let folded = identifier.uppercased()
            guard let index = draft.activities.firstIndex(where: { $0.activityId.uppercased() == folded }) else {
                let imported = AssessmentImport(document)
                draft.activities.append(imported.activity)
                return .created(imported.sageOnlyReasons)
            }
            let existing = draft.activities[index]
            guard existing.assessment != nil, existing.activityId == identifier else { return .taken(existing.activityId) }
            let imported = AssessmentImport(document, replacing: existing)
            draft.activities[index] = imported.activity
            return .replaced(imported.sageOnlyReasons)
        }
        let (created, reasons): (Bool, [ValidationProblem])
        switch placement {
        case .taken(let activityId): throw StudyMetadataError.activityNotFromAssessment(activityId: activityId)
        case .created(let sageOnly): (created, reasons) = (true, sageOnly)
        case .replaced(let sageOnly): (created, reasons) = (false, sageOnly)
        }
        return AssessmentImportResult(
            studyId: studyId, activityId: identifier, created: created, sageOnly: reasons, warnings: check.warnings + warnings)
    }

    /// The assessment the draft's activity `identifier` was imported from, as imported.
    package func assessment(studyId: String, identifier: String) async throws -> JSONValue? {
        guard let draft = try await editing.studies.draft(studyId: studyId) else { return nil }
        let document = try JSONDecoder().decode(StudyDocument.self, from: Data(draft.json.utf8))
        return document.activities.first { $0.activityId == identifier }?.assessment?.document
    }
}
