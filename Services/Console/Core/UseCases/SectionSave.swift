import Foundation
import JSONText
import Logging
import StudyModels

/// A section of a study's draft posted back from its page (the console's section, activity and
/// step pages): a row added, removed or moved (shown again, nothing saved), or the section saved
/// into the draft over the revision the page was drawn from. The admin API has the last word on
/// what may be saved; this decides what the page shows next, and never overwrites a section
/// someone else changed meanwhile.
package struct SectionSave: Sendable {
    /// The draft as the page was drawn from it: the study's summary (with the admin's role), the
    /// draft and its revision.
    package struct Drawn: Sendable {
        package var summary: StudySummary
        package var draft: JSONValue
        package var revision: String
        /// Whether the admin may change the draft (an editor, the study not closed).
        package var editable: Bool

        package init(summary: StudySummary, draft: JSONValue, revision: String, editable: Bool) {
            self.summary = summary
            self.draft = draft
            self.revision = revision
            self.editable = editable
        }
    }

    package enum Outcome: Sendable {
        /// A row was added, removed or moved, or a variant's case shown: the page again with
        /// `form`, nothing saved. `base` is the fingerprint the page was drawn from.
        case edited(form: FormFields, base: String)
        /// The row edit cannot be made (the list is full, or the row is gone).
        case editRefused(base: String)
        /// Someone saved the section since the page was drawn: nothing saved; `current` is the
        /// section's fingerprint now, to save over it knowingly.
        case changedMeanwhile(current: String, by: String, at: Date)
        /// The admin API refused the draft (422: its problems, each at its field) or its revision
        /// (409, 412: saved by someone else between reading and saving).
        case refused(problems: [ValidationProblem], conflict: Bool, current: String)
        /// Saved: the admin API's reply (its warnings) and the document saved.
        case saved(DraftSaved, document: JSONValue)
    }

    package let drafts: any StudyDrafts

    package init(drafts: any StudyDrafts) {
        self.drafts = drafts
    }

    /// What became of `form`, posted to `section` of study `studyId` drawn from `drawn`.
    package func post(
        _ form: FormFields, to section: StudySection, of studyId: String, drawn: Drawn, token: String, logger: Logger
    ) async throws -> Outcome {
        if let op = form["op"] {
            let base = form["base"] ?? ""
            guard let edit = FormEdit(op), let edited = section.editing(form, edit) else { return .editRefused(base: base) }
            return .edited(form: edited, base: base)
        }
        let current = section.fingerprint(of: drawn.draft)
        // (Someone without the editor role has no form to be stale; the admin API refuses them.)
        guard form["base"] == current || !drawn.editable else {
            return .changedMeanwhile(current: current, by: drawn.summary.draftUpdatedBy, at: drawn.summary.draftUpdatedAt)
        }
        let document = try section.applying(form, to: drawn.draft)
        let saved: DraftSaved
        do throws(AdminAPIError) {
            saved = try await drafts.saveDraft(
                studyId, document: document, precondition: .revision(drawn.revision), token: token, logger: logger)
        } catch {
            guard [409, 412, 422].contains(error.status) else { throw error }
            let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
            return .refused(problems: problems, conflict: error.status != 422, current: current)
        }
        return .saved(saved, document: document)
    }
}
