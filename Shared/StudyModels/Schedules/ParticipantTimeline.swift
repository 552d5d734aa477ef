import Foundation

/// A response that arrived from a participant, as registration keeps it from the response
/// service's feed: what it completed, and the offset their phone wrote.
public struct ResponseArrival: Sendable, Equatable {
    public var activityId: String
    /// The run it named, when it named one the apps could have sent (a whole number from 1).
    public var runId: Int?
    public var receivedAt: Date
    /// When the app says the participant finished, when it sent one that reads.
    public var finishedAt: Date?
    /// The offset east of UTC, in minutes, that time was written with.
    public var offsetMinutes: Int?
    /// Whether its answers are in the study's tables: false while it failed processing (and
    /// until it is stored once the team has reprocessed it).
    public var stored: Bool

    public init(activityId: String, runId: Int?, receivedAt: Date, finishedAt: Date?, offsetMinutes: Int?, stored: Bool = true) {
        self.activityId = activityId
        self.runId = runId
        self.receivedAt = receivedAt
        self.finishedAt = finishedAt
        self.offsetMinutes = offsetMinutes
        self.stored = stored
    }

    /// A run id as the apps send it: a whole number from 1, at most nine digits (leading zeros
    /// allowed); anything else names no run.
    public static func runNumber(_ text: String) -> Int? {
        let digits = text.unicodeScalars.drop { $0 == "0" }
        guard (1...9).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return Int(String(String.UnicodeScalarView(digits)))
    }

    /// The completion it is: of the run it names, else of the run open when it was finished (or,
    /// without a time of finishing, when it arrived).
    public var completion: RunCompletion {
        RunCompletion(activityId: activityId, runId: runId, source: stored ? .response : .unstoredResponse, at: finishedAt ?? receivedAt)
    }

    /// The offset it carried, when it carried one a zone can have (UTC-18:00 to +18:00: the
    /// number came from a phone).
    public var sighting: ParticipantZone.Sighting? {
        guard let at = finishedAt, let minutes = offsetMinutes, (-18 * 60...18 * 60).contains(minutes) else { return nil }
        return ParticipantZone.Sighting(at: at, offset: minutes * 60)
    }
}

/// One participant's runs with their states: the study's schedule expanded for them in their
/// zone, against the completions their app reported and the responses that arrived
/// (docs/schedules.md). The one reading of both the runs endpoint and the kept standings.
public struct ParticipantTimeline: Sendable {
    /// The most runs one timeline holds, every activity together: years of a study of a dozen
    /// activities with several windows a day each, a few tens of megabytes at most. Past it the
    /// timeline is cut at a time, so that what it holds is every run before that time
    /// (docs/security.md, Budgets).
    public static let maxRuns = 100_000

    public var zone: ParticipantZone
    /// By start, then activity, then run id.
    public var standings: [RunStanding]
    /// When the runs asked for were more than `maxRuns` (or an activity's expansion reached
    /// `ScheduleEngine.maxRuns`): the time the timeline stops at. Every run that starts before it
    /// is there, none that starts at or after it.
    public var cutAt: Date?

    public init(zone: ParticipantZone, standings: [RunStanding], cutAt: Date? = nil) {
        self.zone = zone
        self.standings = standings
        self.cutAt = cutAt
    }

    /// `joinedAt` nil: not enrolled (yet), no runs. The runs are those open at some time in
    /// [from, to), at most `maxRuns` of them (`cutAt` says where a longer list was cut).
    /// `anchors`: the dates of theirs that anchored schedules count from.
    public static func build(
        schedule: StudySchedule, joinedAt: Date?, leftAt: Date?, platform: Platform, arrivals: [ResponseArrival],
        appCompletions: [RunCompletion], anchors: ParticipantAnchors = ParticipantAnchors(), from: Date, to: Date, now: Date,
        maxRuns: Int = ParticipantTimeline.maxRuns
    ) -> ParticipantTimeline {
        let studyZone = TimeZone(identifier: schedule.timeZone) ?? .gmt
        let zone = ParticipantZone.choose(reported: nil, sightings: arrivals.compactMap(\.sighting), studyZone: studyZone)
        guard let joinedAt else { return ParticipantTimeline(zone: zone, standings: []) }
        let engine = ScheduleEngine(studyZone: studyZone, launchedAt: schedule.launchedAt)
        let clock = ParticipantClock(zone: zone.zone, joinedAt: joinedAt, platform: platform)
        // One budget for every activity together: each expansion keeps at most what is left of
        // it, and when the runs kept pass it, the latest are let go down to a time, which then
        // ends every later expansion too. At most twice the budget is held at any moment.
        var horizon = to
        var cutAt: Date?
        var runs: [ActivityRun] = []
        for activity in schedule.activities {
            let expanded = engine.expand(
                activity, for: clock, anchorDay: anchors.day(for: activity.schedule.anchor), before: horizon, keptFrom: from,
                keepLimit: maxRuns + 1)
            if let cut = expanded.cutAt {
                horizon = min(horizon, cut)
                cutAt = horizon
            }
            runs += expanded.runs
            if runs.count > maxRuns {
                runs.sort { $0.start < $1.start }
                let boundary = runs[maxRuns].start
                horizon = min(horizon, boundary)
                cutAt = horizon
            }
            if cutAt != nil { runs.removeAll { $0.start >= horizon } }
        }
        let standings = RunStates.classify(runs, completions: appCompletions + arrivals.map(\.completion), now: now, leftAt: leftAt)
            .sorted { ($0.run.start, $0.run.activityId, $0.run.runId) < ($1.run.start, $1.run.activityId, $1.run.runId) }
        return ParticipantTimeline(zone: zone, standings: standings, cutAt: cutAt)
    }
}
