import Foundation
import Logging
import ServiceKit
import StudyModels

/// Counts participants' standings again when they are due to change (docs/schedules.md, Kept
/// standings): a run of theirs opens or closes, a response of theirs arrives, their app reports a
/// run completed, they enrol or withdraw. A count reads one participant's schedule, completions
/// and arrivals and writes a row per activity and week; the study-wide views read those rows,
/// and no page view expands a schedule.
package struct RunLedgerSweep: Sendable {
    package let ledgers: any RunLedgers
    package let participants: any ParticipantHistory
    package let studies: any StudySchedules
    package let logger: Logger

    package init(ledgers: any RunLedgers, participants: any ParticipantHistory, studies: any StudySchedules, logger: Logger) {
        self.ledgers = ledgers
        self.participants = participants
        self.studies = studies
        self.logger = logger
    }

    /// Ledgers counted per round.
    package static let batch = 100
    /// How long a claimed ledger is kept from the other replicas while it is counted.
    package static let lease: Duration = .seconds(300)
    /// How far past now a count looks for the next run to open: past any monthly schedule's gap.
    package static let lookahead: TimeInterval = 35 * 86_400
    /// The longest a ledger waits to be counted again when nothing is due to change: a study's
    /// published schedule may have changed, and the count takes the new one within a day.
    package static let longestWait: TimeInterval = 86_400

    /// Ledgers counted at once within a round (`concurrentForEach`): a count's write is a
    /// transaction of a few round trips, and while one waits on the database another computes,
    /// so fewer left the cores idle between them (docs/operations.md, How cost grows). Half the
    /// pool's twenty connections: the rest stay for requests.
    package static let countsAtOnce = 10

    /// One round: counts up to `batch` due ledgers, `countsAtOnce` at a time; how many it took.
    package func round(now: @escaping @Sendable () -> Date = Date.init) async throws -> Int {
        let claimed = try await ledgers.claim(limit: Self.batch, lease: Self.lease)
        // One whose study-metadata does not answer is counted when its lease ends, after
        // `lease`: sooner is not worth a busy loop against a service that is down.
        let counts = try await RoundSchedules.scheduled(claimed, studyId: \.studyId, studies: studies, logger: logger)
        // What the counts read, read for the round at once: a few statements a round, not a
        // few a participant.
        let histories = try await participants.histories(
            of: counts.map { ParticipantHistoryRequest(studyId: $0.0.studyId, userId: $0.0.userId, anchored: ParticipantAnchors.needed(by: $0.1)) },
            now: now())
        let work = zip(counts, histories).compactMap { count, history in history.map { (count.0, count.1, $0) } }
        // The counts queue their weeks for the response service without waking its delivery
        // (RunLedgerStore.write): it is woken once, after them, whether or not all were written.
        var failure: (any Error)?
        do {
            try await concurrentForEach(work, atMost: Self.countsAtOnce) { ledger, schedule, history in
                try await count(ledger, schedule: schedule, history: history, now: now())
            }
        } catch {
            failure = error
        }
        if !work.isEmpty { try await ledgers.wakeDeliveries() }
        if let failure { throw failure }
        return claimed.count
    }

    /// Counts one participant's ledger at `now` against `schedule` (nil: none published), from
    /// what was read of them.
    package func count(
        _ ledger: RunLedgerStore.Claimed, schedule: StudySchedule?, history: ParticipantHistoryRecord, now: Date
    ) async throws {
        let (participant, arrivals, completions, anchors) = (history.participant, history.arrivals, history.completions, history.anchors)
        let since = participant.enrolledAt ?? now
        let empty = StudySchedule(studyId: ledger.studyId, version: 0, timeZone: "UTC", launchedAt: nil, activities: [])
        let timeline = ParticipantTimeline.build(
            schedule: schedule ?? empty, joinedAt: participant.enrolledAt, leftAt: participant.withdrawnAt,
            platform: participant.platform, arrivals: arrivals, appCompletions: completions, anchors: anchors, from: since,
            to: now.addingTimeInterval(Self.lookahead), now: now)
        if let cutAt = timeline.cutAt {
            // Counted up to where the timeline stops: the standings after it are not known.
            logger.warning("a participant's runs are more than one timeline holds; counted up to where it stops", metadata: [
                "studyId": "\(ledger.studyId)", "userId": "\(ledger.userId)", "cutAt": "\(cutAt)", "maxRuns": "\(ParticipantTimeline.maxRuns)",
            ])
        }
        let tally = RunTally.count(
            timeline, activityIds: (schedule?.activities ?? []).map(\.activityId),
            completions: completions + arrivals.map(\.completion), now: now)
        // Someone who left has no runs to come and no schedule change to take: counted again when
        // their last open run closes, or when something of theirs changes.
        // The reminder of each activity's due run, where the study sets one and they are still in it.
        var reminders: [String: RunLedgerStore.Reminder] = [:]
        if participant.withdrawnAt == nil {
            for activity in schedule?.activities ?? [] {
                guard let reminder = activity.reminder,
                    let due = tally.activities.first(where: { $0.activityId == activity.activityId })?.due,
                    let at = ReminderPlan.time(
                        for: due, reminder: reminder, zone: timeline.zone.zone, participant: participant.userId.uuidString)
                else { continue }
                reminders[activity.activityId] = .init(runId: due.runId, at: at)
            }
        }
        let recountAt = participant.withdrawnAt != nil
            ? tally.nextChange ?? .distantFuture : min(tally.nextChange ?? .distantFuture, now.addingTimeInterval(Self.longestWait))
        try await ledgers.write(ledger, zone: timeline.zone, tally: tally, reminders: reminders, recountAt: recountAt)
    }
}
