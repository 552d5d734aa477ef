import CMSEnvelope
import Crypto
import Foundation
import ResponseCore
import SageAssessments
import ServiceKit
import StudyModels
import Synchronization

/// Sage archives stored, in memory: a run stored twice is a replay, and, as the archive statement
/// does, nothing is stored unless the token still admits its participant to a study that collects.
/// Whether the study has an activity for the archive is the test's to set (`answer`).
package final class InMemorySageArchives: SageArchiveKeeping, Sendable {
    private struct State {
        var byRun: [String: UUID] = [:]
        var answer: SageArchiveStore.Stored?
        var stored: [(participantId: Int64, assessment: String)] = []
    }

    private let state = Mutex(State())
    private let keys: [String: StudyKeyPair]
    private let participants: InMemoryResponses

    /// `participants`: who the tokens admit now.
    package init(participants: InMemoryResponses, keys: [String: StudyKeyPair] = [:]) {
        self.participants = participants
        self.keys = keys
    }

    /// Makes every later store answer `answer` (`.noActivity`, `.notAdmitted`); nil stores again.
    package func answer(_ answer: SageArchiveStore.Stored?) {
        state.withLock { $0.answer = answer }
    }

    /// The archives stored, in order: whose and of what assessment.
    package var stored: [(participantId: Int64, assessment: String)] { state.withLock { $0.stored } }

    package func keyPair(studyKey: String) async throws -> StudyKeyPair? { keys[studyKey] }

    package func store(_ reception: SageArchiveReception, participantId: Int64, studyKey: String, appTokenHash: String) async throws
        -> SageArchiveStore.Stored
    {
        guard let (participant, hash) = participants.participant(id: participantId), hash == appTokenHash, !participant.withdrawn,
            participant.collectionEnabled, participant.studyKey == studyKey
        else { return .notAdmitted }
        return state.withLock { state in
            if let answer = state.answer { return answer }
            let run = "\(participantId)/\(reception.idempotencyKey)"
            if let archiveId = state.byRun[run] { return .replay(archiveId) }
            let archiveId = UUID()
            state.byRun[run] = archiveId
            state.stored.append((participantId, reception.assessmentIdentifier))
            return .new(archiveId)
        }
    }
}

/// Archives refused for their content, kept in memory as the store keeps them: one per
/// participant and content, counted again when refused again.
package final class InMemoryRefusedArchives: RefusedArchiveKeeping, Sendable {
    package struct Item: Sendable {
        package var id: UUID
        package var content: [UInt8]
        package var participant: ResponseStore.Participant
        package var appTokenHash: String?
        package var door: SageRefusalStore.Door
        package var reason: String
        package var problems: [ValidationProblem]
        package var timesRefused: Int
        package var archiveId: UUID?
    }

    private let items = Mutex<[Item]>([])
    private let participants: InMemoryResponses

    /// `participants`: who the kept archives' senders are now (the store joins them).
    package init(participants: InMemoryResponses) {
        self.participants = participants
    }

    package var kept: [Item] { items.withLock { $0 } }

    package func keep(
        _ content: [UInt8], sha256: String, participantId: Int64, studyKey: String, door: SageRefusalStore.Door, reason: String,
        problems: [ValidationProblem]
    ) async throws -> UUID? {
        guard let (participant, hash) = participants.participant(id: participantId), !participant.withdrawn else { return nil }
        return items.withLock { items in
            if let index = items.firstIndex(where: { $0.participant.id == participantId && $0.content == content }) {
                items[index].timesRefused += 1
                items[index].reason = reason
                items[index].problems = problems
                return items[index].id
            }
            let id = UUID()
            items.append(Item(
                id: id, content: content, participant: participant, appTokenHash: hash, door: door, reason: reason, problems: problems,
                timesRefused: 1))
            return id
        }
    }

    package func kept(studyKey: String, refusalId: UUID) async throws -> SageRefusalStore.Kept? {
        guard let item = items.withLock({ $0.first { $0.id == refusalId && $0.participant.studyKey == studyKey } }) else { return nil }
        let now = participants.participant(id: item.participant.id)
        return SageRefusalStore.Kept(
            content: item.content, participant: now?.participant ?? item.participant, appTokenHash: now?.appTokenHash,
            archiveId: item.archiveId)
    }

    package func stored(refusalId: UUID, archiveId: UUID, studyKey: String, actor: String) async throws {
        items.withLock { items in
            for index in items.indices where items[index].id == refusalId { items[index].archiveId = archiveId }
        }
    }

    package func refusedAgain(refusalId: UUID, studyKey: String, reason: String, problems: [ValidationProblem]) async throws {
        items.withLock { items in
            for index in items.indices where items[index].id == refusalId {
                items[index].timesRefused += 1
                items[index].reason = reason
                items[index].problems = problems
            }
        }
    }
}

/// Bridge's upload sessions in memory, with the store's rules: at most
/// `SageUploadStore.maxOpenPerParticipant` open at once, a put checked against what was declared,
/// a completed session's bytes dropped.
package final class InMemoryUploads: SageUploadSessions, Sendable {
    package struct Item: Sendable {
        package var session: SageUploadStore.Session
        package var secretHash: String
        package var appTokenHash: String
        package var closed: SageUploadStore.Closed?
        package var attempts = 0
    }

    private let items = Mutex<[UUID: Item]>([:])

    package init() {}

    package func item(_ id: UUID) -> Item? { items.withLock { $0[id] } }

    /// Lets session `id` expire, as time would.
    package func expire(_ id: UUID) { items.withLock { $0[id]?.session.expired = true } }

    package func open(
        studyKey: String, participantId: Int64, appTokenHash: String, name: String, contentLength: Int, contentMD5: String,
        contentType: String, metadata: String
    ) async throws -> SageUploadStore.Opened {
        let id = UUID()
        let secret = SecureToken.generate()
        return items.withLock { items in
            let open = items.values.filter {
                $0.session.participantId == participantId && $0.session.archiveId == nil && $0.closed == nil && !$0.session.expired
            }
            guard open.count < SageUploadStore.maxOpenPerParticipant else { return .tooMany }
            items[id] = Item(
                session: SageUploadStore.Session(
                    id: id, studyKey: studyKey, participantId: participantId, contentLength: contentLength, contentMD5: contentMD5,
                    contentType: contentType, content: nil, archiveId: nil, expired: false),
                secretHash: SecureToken.hash(secret), appTokenHash: appTokenHash)
            return .opened(id: id, secret: secret, expires: Date().addingTimeInterval(7_200))
        }
    }

    package func lookup(id: UUID, secret: String) async throws -> SageUploadStore.Lookup {
        items.withLock { items in
            guard let item = items[id], item.secretHash == SecureToken.hash(secret) else { return .closed(.unknown) }
            if item.session.archiveId != nil { return .closed(.completed) }
            if item.session.expired { return .closed(.expired) }
            return .awaiting(SageUploadStore.Awaiting(
                id: id, length: item.session.contentLength, contentMD5: item.session.contentMD5, contentType: item.session.contentType))
        }
    }

    package func put(_ bytes: [UInt8], into session: SageUploadStore.Awaiting) async throws -> SageUploadStore.Put {
        if let refusal = session.refusal(bytes) { return refusal }
        return items.withLock { items in
            guard let item = items[session.id] else { return .unknown }
            if item.session.archiveId != nil { return .completed }
            if item.session.expired { return .expired }
            items[session.id]?.session.content = bytes
            return .stored
        }
    }

    package func session(id: UUID, participantId: Int64) async throws -> SageUploadStore.Session? {
        items.withLock { items in items[id].flatMap { $0.session.participantId == participantId ? $0.session : nil } }
    }

    package func complete(id: UUID, archiveId: UUID) async throws {
        items.withLock { items in
            items[id]?.session.archiveId = archiveId
            items[id]?.session.content = nil
        }
    }

    package func close(id: UUID, as closed: SageUploadStore.Closed) async throws {
        items.withLock { $0[id]?.closed = closed }
    }

    /// Every session put and neither completed nor closed (the grace is the test's to pass).
    package func claimUncompleted(grace: Duration, limit: Int) async throws -> [SageUploadStore.Uncompleted] {
        items.withLock { items in
            let due = items.values.filter { $0.session.content != nil && $0.session.archiveId == nil && $0.closed == nil }
                .sorted { $0.session.id.uuidString < $1.session.id.uuidString }.prefix(limit)
            return due.map { item in
                items[item.session.id]?.attempts += 1
                return SageUploadStore.Uncompleted(
                    id: item.session.id, participantId: item.session.participantId, appTokenHash: item.appTokenHash,
                    contentMD5: item.session.contentMD5, content: item.session.content ?? [], attempts: item.attempts + 1)
            }
        }
    }
}
