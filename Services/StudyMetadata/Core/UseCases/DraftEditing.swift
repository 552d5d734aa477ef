import Foundation
import ServiceKit
import StudyModels

/// The draft editor's rules, once for every way a study's draft changes: the whole draft from
/// the editor, one activity's design, a schema app protocol and a Sage assessment. Each way
/// reads its own format; here the result is checked as a whole study, saved, and refused with a
/// `StudyMetadataError`.
package struct DraftEditing: Sendable {
    /// Every write of a draft, in one transaction each.
    package let transactions: any Transactions<any DraftWork>
    package let studies: any DraftReading
    package let apps: any AppLookup

    package init(transactions: any Transactions<any DraftWork>, studies: any DraftReading, apps: any AppLookup) {
        self.transactions = transactions
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
        let created = try await write(document, by: admin, expecting: expecting)
        return DraftSaved(studyId: studyId, created: created, warnings: warnings)
    }

    /// Writes the whole draft `document` in one transaction, creating the study when it is new;
    /// true when it did. What the save expected (`expecting`) must be what it finds; a closed
    /// study's draft no longer changes; once a version has been published the study's app stays
    /// (participants' records and enrollment tokens hang on it), and once it has launched its
    /// eligibility type stays (participants joined by it).
    private func write(
        _ document: StudyDocument, by admin: AuthenticatedAdmin, expecting: StudyStore.DraftPrecondition
    ) async throws -> Bool {
        let studyId = document.studyId
        return try await transactions.run { work in
            guard let existing = try await work.lockStudy(studyId) else {
                if case .revision = expecting { throw StudyMetadataError.draftChanged(studyId: studyId, current: 0) }
                guard try await work.insertStudy(document, by: admin) else {
                    throw StudyMetadataError.studyIdTaken(studyId: studyId, existing: try await work.studyId(foldedLike: studyId) ?? studyId)
                }
                if admin.role != .superAdmin { try await work.grantStudyAdmin(adminId: admin.id, studyId: studyId) }
                try await work.record(actor: admin.email, action: "study.created", studyId: studyId, details: [:])
                return true
            }
            if existing.status == .deactivated { throw StudyMetadataError.closed(studyId: studyId) }
            switch expecting {
            case .none: break
            case .revision(let revision) where revision == existing.revision: break
            case .revision: throw StudyMetadataError.draftChanged(studyId: studyId, current: existing.revision)
            case .absent: throw StudyMetadataError.studyExists(studyId: studyId)
            }
            if existing.published, existing.appId != document.appId {
                throw StudyMetadataError.invalid(
                    [ValidationProblem(pointer: "/appId", message: "must stay \(existing.appId): the study has been published in that app")],
                    subject: .studyDocument)
            }
            if [.active, .paused].contains(existing.status), let launched = existing.publishedEligibility,
                launched != document.eligibility.type.rawValue
            {
                throw StudyMetadataError.invalid(
                    [ValidationProblem(
                        pointer: "/eligibility/type",
                        message: "must stay \(launched): the study has launched, and participants joined by it")],
                    subject: .studyDocument)
            }
            try await work.writeDraft(document, studyId: studyId, by: admin.email, movingTo: document.appId)
            // What changed, for the audit log; a draft the model no longer reads is said whole.
            let changed = (try? JSONDecoder().decode(StudyDocument.self, from: Data(existing.draft.utf8)))
                .map { DraftChanges.between($0, document) } ?? "the document"
            try await work.record(actor: admin.email, action: "study.draft_saved", studyId: studyId, details: ["changed": changed])
            return false
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
        do {
            _ = try await write(document, by: admin, expecting: .absent)
        } catch let refusal as StudyMetadataError {
            // The import checked that the study was new; it has been made meanwhile.
            if case .studyIdTaken = refusal { throw refusal }
            throw StudyMetadataError.changedMeanwhile(studyId: document.studyId)
        }
        return review.warnings + PublishGuard.warnings(document, now: now) + review.unfinished
    }

    /// Changes an existing study's draft with `edit` and saves it if the whole draft is valid.
    /// `source` names what the edit came from, for the message of a draft it left invalid;
    /// `locate` moves the draft's problems into the body the edit came from, where they are its.
    package func edit<Made: Sendable>(
        studyId: String, by admin: AuthenticatedAdmin, action: String, details: [String: String] = [:],
        madeFrom source: String, locate: @Sendable (Made, [ValidationProblem]) -> (StudyMetadataError.Subject, [ValidationProblem])? = { _, _ in nil },
        edit: @Sendable (inout StudyDocument) -> Made
    ) async throws -> (warnings: [ValidationProblem], made: Made) {
        try await transactions.run { work in
            guard let existing = try await work.lockStudy(studyId) else { throw StudyMetadataError.noStudy(studyId) }
            if existing.status == .deactivated { throw StudyMetadataError.closed(studyId: studyId) }
            var draft = try JSONDecoder().decode(StudyDocument.self, from: Data(existing.draft.utf8))
            let original = draft
            let made = edit(&draft)
            let review = StudyValidator.review(draft)
            guard review.problems.isEmpty else {
                if let (subject, located) = locate(made, review.problems) { throw StudyMetadataError.invalid(located, subject: subject) }
                throw StudyMetadataError.invalid(review.problems, subject: .draftMadeFrom(source))
            }
            let warnings = review.warnings + review.unfinished
            // An edit that changes nothing writes nothing, and records no event.
            guard draft != original else { return (warnings, made) }
            try await work.writeDraft(draft, studyId: studyId, by: admin.email, movingTo: nil)
            try await work.record(
                actor: admin.email, action: action, studyId: studyId,
                details: details.merging(["changed": DraftChanges.between(original, draft)]) { mine, _ in mine })
            return (warnings, made)
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
