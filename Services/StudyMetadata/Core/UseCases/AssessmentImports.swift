import Foundation
import JSONText
import SageAssessments
import StudyModels

/// A Sage assessment into a study's draft (docs/sage.md): checked, made into an activity, and put
/// in place of the activity it was imported as before, or added. An activity that was not made
/// from an assessment is never replaced by one.
package struct AssessmentImports: Sendable {
    package enum Outcome: Sendable {
        case saved(AssessmentImportResult)
        /// The assessment's problems, located in the assessment; nothing was saved.
        case rejected([ValidationProblem])
        /// The draft the activity would make has problems, located in the draft.
        case invalidDraft([ValidationProblem])
        case notFound
        case closed
        /// An activity of the study has the identifier (or one that differs only in case) and was
        /// not imported from an assessment.
        case taken(activityId: String)
    }

    /// Where the activity went, with why the MyStudies apps cannot run it.
    private enum Placement: Sendable {
        case created([ValidationProblem])
        case replaced([ValidationProblem])
        case taken(String)
    }

    package let studies: StudyStore
    package let schemas: SageSchemaSet

    package init(studies: StudyStore, schemas: SageSchemaSet) {
        self.studies = studies
        self.schemas = schemas
    }

    /// Imports the assessment text `bytes` as the activity `identifier` of `studyId`'s draft.
    package func importAssessment(
        _ bytes: some Collection<UInt8>, identifier: String, studyId: String, by admin: AuthenticatedAdmin
    ) async throws -> Outcome {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            return .rejected([ValidationProblem(pointer: "", message: error.description)])
        }
        var check = AssessmentCheck.check(document, schemas: schemas)
        if document["identifier"]?.string != identifier {
            check.errors.insert(ValidationProblem(pointer: "/identifier", message: "must be \(identifier), the identifier in the address"), at: 0)
        }
        guard check.errors.isEmpty else { return .rejected(check.errors) }
        let outcome = try await studies.editDraft(
            studyId: studyId, by: admin, action: "study.assessment_imported", details: ["activityId": identifier]
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
        switch outcome {
        case .notFound: return .notFound
        case .closed: return .closed
        case .invalid(let problems, _): return .invalidDraft(problems)
        case .saved(_, .taken(let activityId)): return .taken(activityId: activityId)
        case .saved(let warnings, .created(let reasons)), .saved(let warnings, .replaced(let reasons)):
            let created = if case .saved(_, .created) = outcome { true } else { false }
            return .saved(AssessmentImportResult(
                studyId: studyId, activityId: identifier, created: created, sageOnly: reasons, warnings: check.warnings + warnings))
        }
    }

    /// The assessment the draft's activity `identifier` was imported from, as imported.
    package func assessment(studyId: String, identifier: String) async throws -> JSONValue? {
        guard let draft = try await studies.draft(studyId: studyId) else { return nil }
        let document = try JSONDecoder().decode(StudyDocument.self, from: Data(draft.json.utf8))
        return document.activities.first { $0.activityId == identifier }?.assessment?.document
    }
}
