import Foundation
import Logging
import StudyModels

/// A participant's runs between two instants, with their states: the study's schedule (asked of
/// study-metadata) expanded by `ScheduleEngine` for this participant, in their zone (read from the
/// offsets of the responses that arrived from them), against the completions their app reported
/// and the responses that arrived (asked of the response service) (docs/schedules.md).
package struct ParticipantRuns: Sendable {
    package let store: ParticipantRunStore
    package let studies: StudyDirectory
    package let responses: ResponseSubmissions

    package init(store: ParticipantRunStore, studies: StudyDirectory, responses: ResponseSubmissions) {
        self.store = store
        self.studies = studies
        self.responses = responses
    }

    package enum Failure: Error, Sendable, Equatable {
        case noParticipant
        case noStudy
        /// Study-metadata cannot say what the study schedules.
        case scheduleUnavailable
        /// The response service cannot say which responses arrived.
        case responsesUnavailable
    }

    /// The longest span one request covers: a year, leap day included.
    package static let longestSpan: TimeInterval = 366 * 86_400
    /// How far ahead of now a window may end: two years.
    package static let furthestAhead: TimeInterval = 2 * 366 * 86_400

    package func runs(studyId: String, participantId: UUID, from: Date, to: Date, now: Date, logger: Logger) async throws
        -> ParticipantRunsReply
    {
        guard let participant = try await store.participant(studyId: studyId, participantId: participantId) else {
            throw Failure.noParticipant
        }
        let schedule: StudySchedule
        do {
            guard let found = try await studies.schedule(of: studyId, logger: logger) else { throw Failure.noStudy }
            schedule = found
        } catch is StudyDirectory.Unavailable {
            throw Failure.scheduleUnavailable
        }
        let studyZone = TimeZone(identifier: schedule.timeZone) ?? .gmt
        // The responses that arrived since they enrolled (the response service knows them once
        // their app reported the participant id it holds).
        var submissions: [ParticipantSubmissions.Submission] = []
        if let joinedAt = participant.enrolledAt, let hash = participant.appTokenSHA256 {
            do {
                submissions = try await responses.submissions(studyId: studyId, appTokenSHA256: hash, since: joinedAt, logger: logger)
                    .submissions
            } catch is ResponseSubmissions.Unavailable {
                throw Failure.responsesUnavailable
            }
        }
        // An offset past any zone's (UTC±18:00) is no sighting: the number comes over the wire.
        let sightings = submissions.compactMap { submission -> ParticipantZone.Sighting? in
            guard let at = submission.finishedAt, let minutes = submission.offsetMinutes, (-18 * 60...18 * 60).contains(minutes) else {
                return nil
            }
            return ParticipantZone.Sighting(at: at, offset: minutes * 60)
        }
        let zone = ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: studyZone)
        let text = { (date: Date) in WallClock.rfc3339(date, in: zone.zone) }
        var reply = ParticipantRunsReply(
            timeZone: zone.zone.identifier, timeZoneSource: zone.source.rawValue, from: text(from), to: text(to), runs: [])
        // Not enrolled (yet): no runs.
        guard let joinedAt = participant.enrolledAt else { return reply }

        let engine = ScheduleEngine(studyZone: studyZone, launchedAt: schedule.launchedAt)
        // The two apps number a few runs differently; a participant whose device never said is
        // numbered as the iOS app numbers.
        let clock = ParticipantClock(zone: zone.zone, joinedAt: joinedAt, platform: participant.deviceOS == "android" ? .android : .ios)
        var runs: [ActivityRun] = []
        for activity in schedule.activities {
            runs += engine.runs(of: activity, for: clock, before: to).filter { ($0.end ?? .distantFuture) >= from }
        }
        let since = runs.map(\.start).min() ?? from
        var completions = try await store.completions(userId: participant.userId, studyId: studyId, since: since)
        completions += submissions.map { submission in
            RunCompletion(
                activityId: submission.activityId, runId: submission.runId.flatMap(Self.runNumber), source: .response,
                at: submission.finishedAt ?? submission.receivedAt)
        }
        let standings = RunStates.classify(runs, completions: completions, now: now, leftAt: participant.withdrawnAt)
            .sorted { ($0.run.start, $0.run.activityId, $0.run.runId) < ($1.run.start, $1.run.activityId, $1.run.runId) }
        reply.runs = standings.map { standing in
            ParticipantRunsReply.Run(
                activityId: standing.run.activityId, runId: standing.run.runId, start: text(standing.run.start),
                end: standing.run.end.map(text), state: standing.state.rawValue, completedBy: standing.completedBy.map(\.rawValue))
        }
        return reply
    }

    /// A run id as the apps send it: a whole number from 1, at most nine digits (leading zeros
    /// allowed); anything else names no run.
    static func runNumber(_ text: String) -> Int? {
        let digits = text.drop { $0 == "0" }
        guard (1...9).contains(digits.utf8.count), digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(digits)
    }
}
