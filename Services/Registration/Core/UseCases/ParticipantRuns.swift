import Foundation
import Logging
import StudyModels

/// A participant's runs between two instants, with their states: the study's schedule (asked of
/// study-metadata) expanded for this participant in their zone, against the completions their
/// app reported and the responses of theirs that arrived (`ParticipantTimeline`,
/// docs/schedules.md).
package struct ParticipantRuns: Sendable {
    package let store: any ParticipantHistory
    package let studies: any StudySchedules

    package init(store: any ParticipantHistory, studies: any StudySchedules) {
        self.store = store
        self.studies = studies
    }

    /// The longest span one request covers: a year, leap day included.
    package static let longestSpan: TimeInterval = 366 * 86_400
    /// How far ahead of now a window may end: two years.
    package static let furthestAhead: TimeInterval = 2 * 366 * 86_400

    package func runs(studyId: String, participantId: UUID, from: Date, to: Date, now: Date, logger: Logger) async throws
        -> ParticipantRunsReply
    {
        guard let participant = try await store.participant(studyId: studyId, participantId: participantId) else {
            throw RegistrationAdminError.noParticipant(studyId: studyId, participantId: participantId)
        }
        let schedule: StudySchedule
        do {
            guard let found = try await studies.schedule(of: studyId, logger: logger) else { throw RegistrationAdminError.noPublishedStudy(studyId) }
            schedule = found
        } catch is StudyDirectory.Unavailable {
            throw RegistrationAdminError.scheduleUnavailable
        }
        // Everything since they enrolled: the offsets of the latest responses give their zone,
        // and a completion counts for the run open when it was made, which may start before `from`.
        let since = participant.enrolledAt ?? now
        let arrivals = try await store.arrivals(studyId: studyId, appTokenSHA256: participant.appTokenSHA256, since: since)
        let completions = try await store.completions(userId: participant.userId, studyId: studyId, since: since)
        let anchors = ParticipantAnchors.needed(by: schedule)
            ? try await store.anchors(studyId: studyId, appTokenSHA256: participant.appTokenSHA256) : ParticipantAnchors()
        let timeline = ParticipantTimeline.build(
            schedule: schedule, joinedAt: participant.enrolledAt, leftAt: participant.withdrawnAt, platform: participant.platform,
            arrivals: arrivals, appCompletions: completions, anchors: anchors, from: from, to: to, now: now)
        let zone = timeline.zone.zone
        let text = { (date: Date) in WallClock.rfc3339(date, in: zone) }
        return ParticipantRunsReply(
            timeZone: zone.identifier, timeZoneSource: timeline.zone.source.rawValue, from: text(from), to: text(to),
            runs: timeline.standings.map { standing in
                ParticipantRunsReply.Run(
                    activityId: standing.run.activityId, runId: standing.run.runId, start: text(standing.run.start),
                    end: standing.run.end.map(text), state: standing.state.rawValue, completedBy: standing.completedBy.map(\.rawValue))
            },
            cutAt: timeline.cutAt.map(text))
    }
}

extension ParticipantRunStore.Participant {
    /// The two apps number a few runs differently; a participant whose device never said is
    /// numbered as the iOS app numbers.
    package var platform: Platform { deviceOS == "android" ? .android : .ios }
}
