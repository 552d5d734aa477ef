import Foundation
import ServiceKit
import StudyMetadataCore
import StudyModels

/// Studies' drafts in memory, for `DraftEditing`: each study with its status, app, draft,
/// revision and what its newest frozen version says; study ids unique whatever their case, as
/// the case-folded index keeps them; changed in units of work (`InMemoryTransactions`).
package final class InMemoryDrafts: Transactions, DraftReading {
    package struct State: Sendable {
        package var studies: [String: StudyStore.LockedStudy] = [:]
        /// The study admins each new study gave its creator: (admin, study).
        package var studyAdmins: [(UUID, String)] = []
        package var events: [InMemoryAudit.Event] = []
    }

    private let store = InMemoryTransactions(State())

    package init() {}

    package var state: State { store.committed }

    /// The study's draft as stored.
    package func document(_ studyId: String) throws -> StudyDocument? {
        try state.studies[studyId].map { try JSONDecoder().decode(StudyDocument.self, from: Data($0.draft.utf8)) }
    }

    /// Marks the study as a version would leave it: published (its app fixed) and, when
    /// `status` is active or paused, launched with the draft's eligibility type.
    package func publish(_ studyId: String, status: StudyStatus) async throws {
        try await store.update { state in
            guard var study = state.studies[studyId] else { return }
            study.published = true
            study.status = status
            study.publishedEligibility = try JSONDecoder().decode(StudyDocument.self, from: Data(study.draft.utf8)).eligibility.type.rawValue
            state.studies[studyId] = study
        }
    }

    package func exists(studyId: String) async throws -> Bool { state.studies[studyId] != nil }

    package func draft(studyId: String) async throws -> (json: String, revision: Int)? {
        state.studies[studyId].map { ($0.draft, $0.revision) }
    }

    package func run<Result: Sendable>(_ work: (any DraftWork) async throws -> Result) async throws -> Result {
        try await store.run { copy in try await work(Unit(copy: copy)) }
    }

    private struct Unit: DraftWork {
        let copy: WorkingCopy<State>

        func lockStudy(_ studyId: String) async throws -> StudyStore.LockedStudy? { copy.value.studies[studyId] }

        func studyId(foldedLike studyId: String) async throws -> String? {
            copy.value.studies.keys.first { $0.uppercased() == studyId.uppercased() }
        }

        func insertStudy(_ document: StudyDocument, by admin: AuthenticatedAdmin) async throws -> Bool {
            guard try await studyId(foldedLike: document.studyId) == nil else { return false }
            copy.value.studies[document.studyId] = StudyStore.LockedStudy(
                status: .preLaunch, appId: document.appId, draft: try Self.json(document), published: false, revision: 1,
                publishedEligibility: nil)
            return true
        }

        func grantStudyAdmin(adminId: UUID, studyId: String) async throws { copy.value.studyAdmins.append((adminId, studyId)) }

        func writeDraft(_ document: StudyDocument, studyId: String, by email: String, movingTo appId: String?) async throws {
            copy.value.studies[studyId]?.draft = try Self.json(document)
            copy.value.studies[studyId]?.revision += 1
            if let appId { copy.value.studies[studyId]?.appId = appId }
        }

        func record(actor: String, action: String, studyId: String, details: [String: String]) async throws {
            copy.value.events.append(InMemoryAudit.Event(actor: actor, action: action, studyId: studyId, details: details))
        }

        static func json(_ document: StudyDocument) throws -> String { String(decoding: try JSONEncoder().encode(document), as: UTF8.self) }
    }
}
