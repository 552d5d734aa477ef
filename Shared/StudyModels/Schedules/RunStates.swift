import Foundation

/// Where a participant's run stands, from the data that arrived (docs/schedules.md, Run states).
public enum RunState: String, Codable, Sendable, CaseIterable {
    /// It has not opened yet.
    case upcoming
    /// Open now, not done.
    case due
    /// A completion arrived for it.
    case completed
    /// Its response arrived but could not be stored (it failed processing): the participant did
    /// it, the study does not have its answers. It is completed once they are stored.
    case notStored
    /// It closed without one.
    case missed
    /// The participant left the study while it was open, without doing it: it could no longer be
    /// done, and is not counted as missed.
    case expired
}

/// A word that a participant completed a run: from their app, or a response that arrived.
public struct RunCompletion: Sendable, Equatable {
    public enum Source: String, Codable, Sendable, CaseIterable {
        /// The app reported the run completed (`updateActivityState`).
        case app
        /// A response for it was stored.
        case response
        /// A response for it arrived and could not be stored.
        case unstoredResponse
    }

    public var activityId: String
    /// nil: the response named no run, and is matched by its time.
    public var runId: Int?
    public var source: Source
    public var at: Date

    public init(activityId: String, runId: Int?, source: Source, at: Date) {
        self.activityId = activityId
        self.runId = runId
        self.source = source
        self.at = at
    }
}

/// A run with its state, and which sources say it was done (a response that could not be stored
/// among them).
public struct RunStanding: Sendable, Equatable {
    public var run: ActivityRun
    public var state: RunState
    public var completedBy: [RunCompletion.Source]

    public init(run: ActivityRun, state: RunState, completedBy: [RunCompletion.Source]) {
        self.run = run
        self.state = state
        self.completedBy = completedBy
    }
}

public enum RunStates {
    /// The state of each run at `now`, for a participant who left the study at `leftAt` (nil: still
    /// in it). A completion counts for the run its id names, or, naming none, for the run of its
    /// activity open when it arrived (the latest to open, when windows overlap). Runs that open
    /// after the participant left are not theirs and are dropped.
    public static func classify(_ runs: [ActivityRun], completions: [RunCompletion], now: Date, leftAt: Date?) -> [RunStanding] {
        struct Key: Hashable {
            var activityId: String
            var runId: Int
        }
        var sources: [Key: Set<RunCompletion.Source>] = [:]
        for completion in completions {
            if let runId = completion.runId {
                sources[Key(activityId: completion.activityId, runId: runId), default: []].insert(completion.source)
            }
        }
        // Completions without a run id, matched by time within each activity: the latest run to
        // open among those open when it arrived.
        let byActivity = Dictionary(grouping: runs, by: \.activityId)
        for completion in completions where completion.runId == nil {
            let open = (byActivity[completion.activityId] ?? []).filter {
                completion.at >= $0.start && completion.at <= ($0.end ?? .distantFuture)
            }
            if let run = open.max(by: { ($0.start, $0.runId) < ($1.start, $1.runId) }) {
                sources[Key(activityId: run.activityId, runId: run.runId), default: []].insert(completion.source)
            }
        }
        return runs.compactMap { run in
            if let leftAt, run.start >= leftAt { return nil }
            let by = RunCompletion.Source.allCases.filter { sources[Key(activityId: run.activityId, runId: run.runId)]?.contains($0) == true }
            let state: RunState
            // A response that could not be stored outweighs the app's word: the app says
            // completed for exactly the run whose answers failed. A stored one outweighs both.
            if by.contains(.response) {
                state = .completed
            } else if by.contains(.unstoredResponse) {
                state = .notStored
            } else if !by.isEmpty {
                state = .completed
            } else if let leftAt, leftAt <= now, leftAt <= (run.end ?? .distantFuture) {
                state = .expired
            } else if run.start > now {
                state = .upcoming
            } else if let end = run.end, end < now {
                state = .missed
            } else {
                state = .due
            }
            return RunStanding(run: run, state: state, completedBy: by)
        }
    }
}
