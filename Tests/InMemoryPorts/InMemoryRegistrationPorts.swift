import Foundation
import Logging
import RegistrationCore
import ServiceKit
import StudyModels
import Synchronization

/// Study-metadata's answers about studies, in memory: a published schedule, none, or no answer
/// at all (`StudyDirectory.Unavailable`, as when study-metadata is down). Counts the questions.
package final class InMemoryStudySchedules: StudySchedules, Sendable {
    private struct State {
        var schedules: [String: StudySchedule] = [:]
        var unreachable: Set<String> = []
        var asked: [String] = []
    }

    private let state = Mutex(State())

    package init(_ schedules: [StudySchedule] = []) {
        state.withLock { state in for schedule in schedules { state.schedules[schedule.studyId] = schedule } }
    }

    /// Study-metadata stops answering about `studyId`.
    package func stopAnswering(_ studyId: String) { state.withLock { _ = $0.unreachable.insert(studyId) } }

    /// The study ids asked about, in order.
    package var asked: [String] { state.withLock { $0.asked } }

    package func standing(of studyId: String, logger: Logger) async throws -> StudyStanding? {
        guard let schedule = try await schedule(of: studyId, logger: logger) else { return nil }
        return StudyStanding(studyId: schedule.studyId, appId: "APP", status: .active)
    }

    package func schedule(of studyId: String, logger: Logger) async throws -> StudySchedule? {
        try state.withLock { state in
            state.asked.append(studyId)
            if state.unreachable.contains(studyId) { throw StudyDirectory.Unavailable() }
            return state.schedules[studyId]
        }
    }
}

/// Participants' parts in studies, in memory: who they are, what their apps reported done, what
/// of theirs arrived, their anchors.
package final class InMemoryParticipantHistory: ParticipantHistory, Sendable {
    package struct Part: Sendable {
        package var studyId: String
        package var participantId: UUID
        package var participant: ParticipantRunStore.Participant
        package var completions: [RunCompletion] = []
        package var arrivals: [ResponseArrival] = []
        package var anchors = ParticipantAnchors()

        package init(studyId: String, participantId: UUID = UUID(), participant: ParticipantRunStore.Participant) {
            self.studyId = studyId
            self.participantId = participantId
            self.participant = participant
        }
    }

    private let parts: Mutex<[Part]>

    package init(_ parts: [Part] = []) {
        self.parts = Mutex(parts)
    }

    private func part(_ match: (Part) -> Bool) -> Part? { parts.withLock { $0.first(where: match) } }

    package func participant(studyId: String, participantId: UUID) async throws -> ParticipantRunStore.Participant? {
        part { $0.studyId == studyId && $0.participantId == participantId }?.participant
    }

    package func participant(studyId: String, userId: UUID) async throws -> ParticipantRunStore.Participant? {
        part { $0.studyId == studyId && $0.participant.userId == userId }?.participant
    }

    package func histories(of wanted: [ParticipantHistoryRequest], now: Date) async throws -> [ParticipantHistoryRecord?] {
        try await historiesOneByOne(of: wanted, now: now)
    }

    package func completions(userId: UUID, studyId: String, since: Date) async throws -> [RunCompletion] {
        (part { $0.studyId == studyId && $0.participant.userId == userId }?.completions ?? []).filter { $0.at >= since }
    }

    package func arrivals(studyId: String, appTokenSHA256: String?, since: Date) async throws -> [ResponseArrival] {
        guard let appTokenSHA256 else { return [] }
        return (part { $0.studyId == studyId && $0.participant.appTokenSHA256 == appTokenSHA256 }?.arrivals ?? [])
            .filter { $0.receivedAt >= since }
    }

    package func anchors(studyId: String, appTokenSHA256: String?) async throws -> ParticipantAnchors {
        part { $0.studyId == studyId && $0.participant.appTokenSHA256 == appTokenSHA256 }?.anchors ?? ParticipantAnchors()
    }
}

/// Kept standings in memory: the ledgers due, each taken once per claim, and every count written.
package final class InMemoryRunLedgers: RunLedgers, Sendable {
    package struct Written: Sendable {
        package var ledger: RunLedgerStore.Claimed
        package var zone: ParticipantZone
        package var tally: RunTally
        package var reminders: [String: RunLedgerStore.Reminder]
        package var recountAt: Date
    }

    private let due: Mutex<[RunLedgerStore.Claimed]>
    private let counts = Mutex<[Written]>([])

    package init(due: [RunLedgerStore.Claimed]) {
        self.due = Mutex(due)
    }

    package var written: [Written] { counts.withLock { $0 } }

    package func claim(limit: Int, lease: Duration) async throws -> [RunLedgerStore.Claimed] {
        due.withLock { due in
            let taken = Array(due.prefix(limit))
            due.removeFirst(taken.count)
            return taken
        }
    }

    package func write(
        _ claimed: RunLedgerStore.Claimed, zone: ParticipantZone, tally: RunTally, reminders: [String: RunLedgerStore.Reminder],
        recountAt: Date
    ) async throws {
        counts.withLock { $0.append(Written(ledger: claimed, zone: zone, tally: tally, reminders: reminders, recountAt: recountAt)) }
    }

    /// How many counts were written when each wake came.
    package var wakes: [Int] { wakesAt.withLock { $0 } }
    private let wakesAt = Mutex<[Int]>([])

    package func wakeDeliveries() async throws {
        let written = counts.withLock { $0.count }
        wakesAt.withLock { $0.append(written) }
    }
}

/// The reminders planned, in memory: each due one taken once, and what became of it.
package final class InMemoryDueReminders: DueReminders, Sendable {
    package enum Fate: Sendable, Equatable {
        case released
        case postponed(until: Date)
        case decided(localDay: String, runWeek: String, maxPerDay: Int, title: String, message: String)
    }

    private let due: Mutex<[RunReminderStore.Due]>
    private let record = Mutex<[(RunReminderStore.Due, Fate)]>([])
    private let outcome: RunReminderStore.Outcome

    /// `outcome`: what deciding a reminder comes to (the store's checks of devices and limits).
    package init(due: [RunReminderStore.Due], outcome: RunReminderStore.Outcome = .queued) {
        self.due = Mutex(due)
        self.outcome = outcome
    }

    /// What became of each reminder, in the order decided.
    package var fates: [Fate] { record.withLock { $0.map(\.1) } }

    package func claim(limit: Int, lease: Duration) async throws -> [RunReminderStore.Due] {
        due.withLock { due in
            let taken = Array(due.prefix(limit))
            due.removeFirst(taken.count)
            return taken
        }
    }

    package func release(_ due: RunReminderStore.Due) async throws {
        record.withLock { $0.append((due, .released)) }
    }

    package func postpone(_ due: RunReminderStore.Due, until: Date) async throws {
        record.withLock { $0.append((due, .postponed(until: until))) }
    }

    package func decide(
        _ due: RunReminderStore.Due, maxPerDay: Int, localDay: String, runWeek: String,
        message: @Sendable (Int64, String, String) -> NotificationMessage
    ) async throws -> RunReminderStore.Outcome? {
        let push = message(1, "APP", "ORG")
        record.withLock {
            $0.append((due, .decided(
                localDay: localDay, runWeek: runWeek, maxPerDay: maxPerDay, title: push.title.text(for: nil),
                message: push.message.text(for: nil))))
        }
        return outcome
    }
}

/// Apps' support addresses in memory: which apps have a feedback or a contact address, and the
/// messages queued to them.
package final class InMemorySupportMailbox: SupportMailbox, Sendable {
    private struct State {
        var addresses: Set<String> = []
        var queued: [(appId: String, message: SupportMessage)] = []
    }

    private let state = Mutex(State())

    /// `appId` names an address for `kind`.
    package init(_ addresses: [(appId: String, kind: SupportMessage.Kind)] = []) {
        state.withLock { state in for (appId, kind) in addresses { state.addresses.insert("\(appId) \(kind)") } }
    }

    package var queued: [(appId: String, message: SupportMessage)] { state.withLock { $0.queued } }

    package func queue(_ message: SupportMessage, appId: String, orgId: String) async throws -> Bool {
        state.withLock { state in
            guard state.addresses.contains("\(appId) \(message.kind)") else { return false }
            state.queued.append((appId, message))
            return true
        }
    }
}

/// What test runs left, in memory: each row with its study, its kind and when it was written, as
/// `TestRunStore` removes them (a study's rows written up to a moment, counted by kind).
package final class InMemoryTestRunRecords: TestRunRecords, Sendable {
    package enum Kind: Sendable { case studyState, activityState, consent(pdfKey: String?), invitation }

    package struct Row: Sendable {
        package var studyId: String
        package var kind: Kind
        package var writtenAt: Date

        package init(studyId: String, kind: Kind, writtenAt: Date) {
            self.studyId = studyId
            self.kind = kind
            self.writtenAt = writtenAt
        }
    }

    private let rows: Mutex<[Row]>
    private let events = Mutex<[String]>([])

    package init(_ rows: [Row]) {
        self.rows = Mutex(rows)
    }

    package var remaining: [Row] { rows.withLock { $0 } }
    /// The audit events recorded, each with its study.
    package var audited: [String] { events.withLock { $0 } }

    package func removeRecords(studyId: String, upTo at: Date) async throws -> (removed: TestRunRemoval, pdfKeys: [String]) {
        let removed = rows.withLock { rows in
            let (gone, kept) = (rows.filter { $0.studyId == studyId && $0.writtenAt <= at }, rows.filter { !($0.studyId == studyId && $0.writtenAt <= at) })
            rows = kept
            return gone
        }
        var counts = TestRunRemoval(studyStates: 0, activityStates: 0, consents: 0, invitations: 0)
        var keys: [String] = []
        for row in removed {
            switch row.kind {
            case .studyState: counts.studyStates += 1
            case .activityState: counts.activityStates += 1
            case .invitation: counts.invitations += 1
            case .consent(let key):
                counts.consents += 1
                if let key { keys.append(key) }
            }
        }
        events.withLock { $0.append("study.test_data_removed \(studyId)") }
        return (counts, keys)
    }
}

/// Signed consent PDFs in memory; a key in `failing` cannot be removed (as a file system that
/// refuses).
package final class InMemoryConsentFiles: ConsentStorage, Sendable {
    private let files: Mutex<[String: Data]>
    private let failing: Set<String>

    package init(_ files: [String: Data], failing: Set<String> = []) {
        self.files = Mutex(files)
        self.failing = failing
    }

    package var keys: Set<String> { Set(files.withLock { $0.keys }) }

    package func store(_ pdf: Data) async throws -> String {
        try await store(pdf, id: UUID())
    }

    package func store(_ pdf: Data, id: UUID) async throws -> String {
        let key = id.uuidString
        files.withLock { $0[key] = pdf }
        return key
    }

    package func load(_ key: String) async throws -> Data {
        guard let data = files.withLock({ $0[key] }) else { throw CocoaError(.fileNoSuchFile) }
        return data
    }

    package func remove(_ key: String) async throws {
        if failing.contains(key) { throw CocoaError(.fileWriteNoPermission) }
        _ = files.withLock { $0.removeValue(forKey: key) }
    }
}
