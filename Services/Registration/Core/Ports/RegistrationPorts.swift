import Foundation
import Logging
import StudyModels

// What registration's schedule use cases need of storage and of study-metadata, each as small as
// the use cases ask it. The PostgreSQL stores and the study-metadata client conform unchanged (at
// the end of this file); the tests' in-memory conformers (`Tests/InMemoryPorts`) let each use
// case's rules run without a database or a peer.

/// What study-metadata says of a study a participant names. Both throw
/// `StudyDirectory.Unavailable` when study-metadata cannot say.
package protocol StudySchedules: Sendable {
    /// The published study's app and status; nil when none is published by that id.
    func standing(of studyId: String, logger: Logger) async throws -> StudyStanding?
    /// What the study schedules at its newest published version; nil when none is published.
    func schedule(of studyId: String, logger: Logger) async throws -> StudySchedule?
}

/// A participant's part in a study as their runs are counted: who they are, what their app
/// reported done, what of theirs arrived, and their anchors' dates.
package protocol ParticipantHistory: Sendable {
    func participant(studyId: String, participantId: UUID) async throws -> ParticipantRunStore.Participant?
    func participant(studyId: String, userId: UUID) async throws -> ParticipantRunStore.Participant?
    func completions(userId: UUID, studyId: String, since: Date) async throws -> [RunCompletion]
    func arrivals(studyId: String, appTokenSHA256: String?, since: Date) async throws -> [ResponseArrival]
    func anchors(studyId: String, appTokenSHA256: String?) async throws -> ParticipantAnchors
    /// What a count reads of each of `wanted` (nil: not in the study), in their order; `now` is
    /// where the reads of one not yet enrolled start.
    func histories(of wanted: [ParticipantHistoryRequest], now: Date) async throws -> [ParticipantHistoryRecord?]
}

extension ParticipantHistory {
    /// One participant at a time, through the reads above.
    package func historiesOneByOne(of wanted: [ParticipantHistoryRequest], now: Date) async throws -> [ParticipantHistoryRecord?] {
        var found: [ParticipantHistoryRecord?] = []
        for request in wanted {
            guard let participant = try await participant(studyId: request.studyId, userId: request.userId) else {
                found.append(nil)
                continue
            }
            let since = participant.enrolledAt ?? now
            found.append(ParticipantHistoryRecord(
                participant: participant,
                completions: try await completions(userId: participant.userId, studyId: request.studyId, since: since),
                arrivals: try await arrivals(studyId: request.studyId, appTokenSHA256: participant.appTokenSHA256, since: since),
                anchors: request.anchored
                    ? try await anchors(studyId: request.studyId, appTokenSHA256: participant.appTokenSHA256) : ParticipantAnchors()))
        }
        return found
    }
}

/// Participants' kept standings: those due to be counted again, each leased to this caller, and
/// each count written back.
package protocol RunLedgers: Sendable {
    func claim(limit: Int, lease: Duration) async throws -> [RunLedgerStore.Claimed]
    func write(
        _ claimed: RunLedgerStore.Claimed, zone: ParticipantZone, tally: RunTally, reminders: [String: RunLedgerStore.Reminder],
        recountAt: Date
    ) async throws
    /// Wakes the delivery of what the counts written since the last wake queued.
    func wakeDeliveries() async throws
}

/// The reminders the counts planned, each decided once when due.
package protocol DueReminders: Sendable {
    /// The reminders due, each leased to this caller.
    func claim(limit: Int, lease: Duration) async throws -> [RunReminderStore.Due]
    /// Not to be sent: the study no longer reminds of it, or quiet hours never end.
    func release(_ due: RunReminderStore.Due) async throws
    /// To be decided again at `until` (the end of quiet hours).
    func postpone(_ due: RunReminderStore.Due, until: Date) async throws
    /// Decided once: recorded with its outcome, its pushes queued; nil when skipped (they left,
    /// or the run is no longer the one due).
    func decide(
        _ due: RunReminderStore.Due, maxPerDay: Int, localDay: String, runWeek: String,
        message: @Sendable (Int64, String, String) -> NotificationMessage
    ) async throws -> RunReminderStore.Outcome?
}

extension StudyDirectory: StudySchedules {}
extension ParticipantRunStore: ParticipantHistory {}
extension RunLedgerStore: RunLedgers {}
extension RunReminderStore: DueReminders {}

/// Where a participant's support message goes: the app's address for its kind, the mail outbox
/// and the audit trail, in one transaction.
package protocol SupportMailbox: Sendable {
    /// Queues `message` to the app's address for its kind, with its audit event; false, and
    /// nothing queued, when the app names no such address.
    func queue(_ message: SupportMessage, appId: String, orgId: String) async throws -> Bool
}

/// What a study's test run left (`TestRunCleanup`): removed in one transaction with its audit
/// event, up to the moment testing ended.
package protocol TestRunRecords: Sendable {
    /// The counts removed, and the keys of the signed PDFs the removed consent records named.
    func removeRecords(studyId: String, upTo: Date) async throws -> (removed: TestRunRemoval, pdfKeys: [String])
}

extension TestRunStore: TestRunRecords {}
