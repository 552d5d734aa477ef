import Foundation

/// How a participant stands in one activity at one moment, counted from their timeline: what
/// registration keeps for each participant and activity, so that the study-wide views (who is
/// behind, rates per week, reminders) read a row each rather than expanding schedules.
public struct ActivityTally: Sendable, Equatable {
    /// A calendar week's runs, Monday to Sunday in the participant's zone, by the day each opened.
    public struct Week: Sendable, Equatable {
        /// The Monday (`GregorianDays` numbering).
        public var monday: Int
        /// Runs that opened that week, whatever became of them (those still open included).
        public var opened: Int
        public var completed: Int
        public var missed: Int
        public var expired: Int
        /// Done, but its answers could not be stored (`RunState.notStored`).
        public var notStored: Int

        public init(monday: Int, opened: Int, completed: Int, missed: Int, expired: Int, notStored: Int = 0) {
            self.monday = monday
            self.opened = opened
            self.completed = completed
            self.missed = missed
            self.expired = expired
            self.notStored = notStored
        }
    }

    public var activityId: String
    /// Runs that have opened so far, and of them those completed, missed, expired and done
    /// without their answers stored (the rest are open now).
    public var opened = 0
    public var completed = 0
    public var missed = 0
    public var expired = 0
    public var notStored = 0
    /// The runs missed since the last one completed (or since they joined): how far behind they
    /// are right now.
    public var missedInARow = 0
    /// The run open now and not done (the one closing first, when several are).
    public var due: ActivityRun?
    /// When the next run opens, if one does.
    public var nextRunAt: Date?
    /// The latest completion's time, from either source.
    public var lastCompletedAt: Date?
    /// Oldest first; only weeks in which a run opened.
    public var weeks: [Week] = []

    public init(activityId: String) {
        self.activityId = activityId
    }
}

/// A participant's tallies for every activity of their study, and when they next change.
public struct RunTally: Sendable, Equatable {
    public var activities: [ActivityTally]
    /// The next instant a run opens or closes: the tallies hold until then, unless data arrives.
    public var nextChange: Date?

    /// The Monday on or before `day` (`GregorianDays` numbering: day 0, 1970-01-01, a Thursday).
    public static func monday(of day: Int) -> Int {
        let sinceMonday = ((day + 3) % 7 + 7) % 7
        return day - sinceMonday
    }

    /// Tallies `timeline` (its runs from their enrolment on) at `now`, an entry for each of
    /// `activityIds` (the study's scheduled activities), with the completions' latest times.
    public static func count(_ timeline: ParticipantTimeline, activityIds: [String], completions: [RunCompletion], now: Date) -> RunTally {
        var tallies: [String: ActivityTally] = [:]
        for id in activityIds { tallies[id] = ActivityTally(activityId: id) }
        var weeks: [String: [Int: ActivityTally.Week]] = [:]
        var nextChange: Date?
        func consider(_ instant: Date) {
            if instant > now, nextChange.map({ instant < $0 }) ?? true { nextChange = instant }
        }
        // By start: the run-after-run order `missedInARow` counts in.
        for standing in timeline.standings {
            let run = standing.run
            guard var tally = tallies[run.activityId] else { continue }
            consider(run.start)
            if let end = run.end { consider(end) }
            if standing.state == .upcoming {
                if tally.nextRunAt.map({ run.start < $0 }) ?? true { tally.nextRunAt = run.start }
                tallies[run.activityId] = tally
                continue
            }
            tally.opened += 1
            let monday = WallClock(run.start, in: timeline.zone.zone).map { Self.monday(of: $0.day) } ?? 0
            var week = weeks[run.activityId]?[monday] ?? ActivityTally.Week(monday: monday, opened: 0, completed: 0, missed: 0, expired: 0)
            week.opened += 1
            switch standing.state {
            case .completed:
                tally.completed += 1
                tally.missedInARow = 0
                week.completed += 1
            case .notStored:
                // Done: not behind, but not completed while the study lacks its answers.
                tally.notStored += 1
                tally.missedInARow = 0
                week.notStored += 1
            case .missed:
                tally.missed += 1
                tally.missedInARow += 1
                week.missed += 1
            case .expired:
                tally.expired += 1
                week.expired += 1
            case .due:
                if tally.due.map({ (run.end ?? .distantFuture) < ($0.end ?? .distantFuture) }) ?? true { tally.due = run }
            case .upcoming:
                break
            }
            weeks[run.activityId, default: [:]][monday] = week
            tallies[run.activityId] = tally
        }
        // A response that could not be stored completed nothing yet.
        for completion in completions where completion.source != .unstoredResponse {
            guard var tally = tallies[completion.activityId] else { continue }
            if tally.lastCompletedAt.map({ completion.at > $0 }) ?? true { tally.lastCompletedAt = completion.at }
            tallies[completion.activityId] = tally
        }
        let activities = activityIds.compactMap { id -> ActivityTally? in
            guard var tally = tallies[id] else { return nil }
            tally.weeks = (weeks[id] ?? [:]).values.sorted { $0.monday < $1.monday }
            return tally
        }
        return RunTally(activities: activities, nextChange: nextChange)
    }
}
