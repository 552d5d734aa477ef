import Foundation
import ServiceKit
import StudyModels

/// The draft editor's rules, once for every way a study's draft changes: the whole draft from
/// the editor, one activity's design, a schema app protocol and a Sage assessment. Each way
/// reads its own format; here the result is checked as a whole study, saved, and refused with a
/// `StudyMetadataError`.
package struct DraftEditing: Sendable {
    package let studies: StudyStore
    package let apps: AppStore

    package init(studies: StudyStore, apps: AppStore) {
        self.studies = studies
        self.apps = apps
    }

    /// Leave to write one study's draft, from `authorize`: who, which study, and whether it
    /// existed when asked.
    package struct Access: Sendable {
        package let admin: AuthenticatedAdmin
        package let studyId: String
        package let studyExists: Bool
    }

    /// Whether `admin` may write `studyId`'s draft: an existing study needs its editor; anyone
    /// signed in may start a new study, and becomes its study admin. Routes ask before they read
    /// a body, so a refused admin's upload is never read.
    package func authorize(_ admin: AuthenticatedAdmin, studyId: String) async throws -> Access {
        let exists = try await studies.exists(studyId: studyId)
        if exists, !admin.may(.editor, on: studyId) { throw StudyMetadataError.editorRequired(studyId: studyId) }
        return Access(admin: admin, studyId: studyId, studyExists: exists)
    }

    /// Saves the whole draft `document` of `studyId` (creating the study when new), if what the
    /// save expected is what it finds. What is unfinished saves with a warning; publishing
    /// refuses it (`PublishGuard`).
    package func save(
        _ document: StudyDocument, with access: Access, expecting: StudyStore.DraftPrecondition, now: Date = Date()
    ) async throws -> DraftSaved {
        let (studyId, admin) = (access.studyId, access.admin)
        let review = StudyValidator.review(document)
        var problems = review.problems
        if document.studyId != studyId {
            problems.insert(ValidationProblem(pointer: "/studyId", message: "must be \(studyId), the study in the path"), at: 0)
        }
        if try await apps.app(id: document.appId) == nil {
            problems.append(ValidationProblem(pointer: "/appId", message: "there is no app \(document.appId); create it first"))
        }
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .studyDocument) }
        let warnings = review.warnings + PublishGuard.warnings(document, now: now) + review.unfinished
        switch try await studies.saveDraft(document, by: admin, expecting: expecting) {
        case .created: return DraftSaved(studyId: studyId, created: true, warnings: warnings)
        case .updated: return DraftSaved(studyId: studyId, created: false, warnings: warnings)
        case .preconditionFailed(let current):
            throw expecting == .absent
                ? StudyMetadataError.studyExists(studyId: studyId)
                : StudyMetadataError.draftChanged(studyId: studyId, current: current)
        case .closed: throw StudyMetadataError.closed(studyId: studyId)
        case .appFixed(let appId):
            throw StudyMetadataError.invalid(
                [ValidationProblem(pointer: "/appId", message: "must stay \(appId): the study has been published in that app")],
                subject: .studyDocument)
        case .eligibilityFixed(let type):
            throw StudyMetadataError.invalid(
                [ValidationProblem(
                    pointer: "/eligibility/type",
                    message: "must stay \(type): the study has launched, and participants joined by it")],
                subject: .studyDocument)
        case .idTaken(let existing): throw StudyMetadataError.studyIdTaken(studyId: studyId, existing: existing)
        }
    }

    /// Creates the study `document` made from imported content (`source` names the format, for
    /// the problems' message); `problems` are the import's own, about what is not in the document.
    /// Answers the draft's warnings.
    package func create(
        _ document: StudyDocument, madeFrom source: String, problems: [ValidationProblem] = [], by admin: AuthenticatedAdmin,
        now: Date = Date()
    ) async throws -> [ValidationProblem] {
        let review = StudyValidator.review(document)
        var all = problems + review.problems
        if try await apps.app(id: document.appId) == nil {
            all.append(ValidationProblem(pointer: "/appId", message: "there is no app \(document.appId); create it first"))
        }
        guard all.isEmpty else { throw StudyMetadataError.invalid(all, subject: .draftMadeFrom(source)) }
        switch try await studies.saveDraft(document, by: admin, expecting: .absent) {
        case .created: return review.warnings + PublishGuard.warnings(document, now: now) + review.unfinished
        case .idTaken(let existing): throw StudyMetadataError.studyIdTaken(studyId: document.studyId, existing: existing)
        case .updated, .closed, .appFixed, .eligibilityFixed, .preconditionFailed:
            throw StudyMetadataError.changedMeanwhile(studyId: document.studyId)
        }
    }

    /// Changes an existing study's draft with `edit` and saves it if the whole draft is valid.
    /// `source` names what the edit came from, for the message of a draft it left invalid;
    /// `locate` moves the draft's problems into the body the edit came from, where they are its.
    package func edit<Made: Sendable>(
        studyId: String, by admin: AuthenticatedAdmin, action: String, details: [String: String] = [:],
        madeFrom source: String, locate: @Sendable (Made, [ValidationProblem]) -> (StudyMetadataError.Subject, [ValidationProblem])? = { _, _ in nil },
        edit: @Sendable (inout StudyDocument) -> Made
    ) async throws -> (warnings: [ValidationProblem], made: Made) {
        let review: StudyStore.DraftReview = { draft in
            let review = StudyValidator.review(draft)
            return (review.problems, review.warnings + review.unfinished)
        }
        switch try await studies.editDraft(studyId: studyId, by: admin, action: action, details: details, review: review, edit: edit) {
        case .saved(let warnings, let made): return (warnings, made)
        case .notFound: throw StudyMetadataError.noStudy(studyId)
        case .closed: throw StudyMetadataError.closed(studyId: studyId)
        case .invalid(let problems, let made):
            if let (subject, located) = locate(made, problems) { throw StudyMetadataError.invalid(located, subject: subject) }
            throw StudyMetadataError.invalid(problems, subject: .draftMadeFrom(source))
        }
    }

    /// One activity into the draft, replacing the one with its id or added after the others;
    /// `make` receives the activity it replaces. The activity's problems and warnings are
    /// located in it (`/activity/...`); the draft's others stay located in the draft.
    package func saveActivity(
        studyId: String, activityId: String, by admin: AuthenticatedAdmin,
        make: @escaping @Sendable (StudyActivity?) -> StudyActivity
    ) async throws -> (activity: StudyActivity, created: Bool, warnings: [ValidationProblem]) {
        let (warnings, made) = try await edit(
            studyId: studyId, by: admin, action: "study.activity_saved", details: ["activityId": activityId],
            madeFrom: "activity", locate: { made, problems in (.activity, Self.locate(problems, activityIndex: made.index)) }
        ) { draft in
            let index = draft.activities.firstIndex { $0.activityId == activityId }
            let activity = make(index.map { draft.activities[$0] })
            if let index { draft.activities[index] = activity } else { draft.activities.append(activity) }
            return (activity: activity, created: index == nil, index: index ?? draft.activities.count - 1)
        }
        let own = Self.locate(warnings, activityIndex: made.index).filter { $0.pointer == "/activity" || $0.pointer.hasPrefix("/activity/") }
        return (made.activity, made.created, own)
    }

    /// Problems of the activity at `index` located in the body (`/activity/...`); any others
    /// stay located in the draft.
    package static func locate(_ problems: [ValidationProblem], activityIndex index: Int) -> [ValidationProblem] {
        let prefix = "/activities/\(index)"
        return problems.map { problem in
            guard problem.pointer == prefix || problem.pointer.hasPrefix(prefix + "/") else { return problem }
            return ValidationProblem(pointer: "/activity" + problem.pointer.dropFirst(prefix.count), message: problem.message)
        }
    }
}
