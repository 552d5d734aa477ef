import Foundation
import StudyModels
import Testing

/// `RunStates`: each run's state from the completions that arrived, the clock, and when the
/// participant left.
@Suite struct RunStatesTests {
    static let day: TimeInterval = 86_400
    static let origin = Date(timeIntervalSince1970: 1_780_000_000)

    /// Daily runs 1 to 5 of activity `a`, each a day long, from `origin`.
    static let runs = (0..<5).map { index in
        ActivityRun(
            activityId: "a", runId: index + 1, start: origin.addingTimeInterval(Double(index) * day),
            end: origin.addingTimeInterval(Double(index + 1) * day - 1))
    }

    static func at(_ days: Double) -> Date { origin.addingTimeInterval(days * day) }

    @Test func eachStateFromTheDataAndTheClock() {
        let completions = [
            RunCompletion(activityId: "a", runId: 1, source: .app, at: Self.at(0.5)),
            RunCompletion(activityId: "a", runId: 1, source: .response, at: Self.at(0.6)),
            // No run id: matched by time, to run 2.
            RunCompletion(activityId: "a", runId: nil, source: .response, at: Self.at(1.5)),
            // Another activity's completion counts for nothing here.
            RunCompletion(activityId: "b", runId: 4, source: .app, at: Self.at(3.5)),
        ]
        let standings = RunStates.classify(Self.runs, completions: completions, now: Self.at(3.5), leftAt: nil)
        #expect(standings.map(\.state) == [.completed, .completed, .missed, .due, .upcoming])
        #expect(standings[0].completedBy == [.app, .response], "both sources are shown")
        #expect(standings[1].completedBy == [.response])
        #expect(standings[2].completedBy.isEmpty)
    }

    /// A response that arrived but could not be stored: the run is done, its answers are not in
    /// the study. The app's "completed" (sent for exactly that run) does not make it completed; a
    /// stored response does, and one that names no run is matched by its time like any other.
    @Test func aRunWhoseResponseCouldNotBeStoredIsNeverCompleted() {
        let unstored = { (run: Int?, at: Double) in
            ResponseArrival(activityId: "a", runId: run, receivedAt: Self.at(at), finishedAt: nil, offsetMinutes: nil, stored: false).completion
        }
        let completions = [
            RunCompletion(activityId: "a", runId: 1, source: .app, at: Self.at(0.5)), unstored(1, 0.6),
            // Stored on another try (a second response for run 2), it is completed.
            unstored(2, 1.4), RunCompletion(activityId: "a", runId: 2, source: .response, at: Self.at(1.6)),
            // No run id: matched by time, to run 3.
            unstored(nil, 2.5),
        ]
        #expect(completions[1].source == .unstoredResponse)
        let standings = RunStates.classify(Self.runs, completions: completions, now: Self.at(3.5), leftAt: nil)
        #expect(standings.map(\.state) == [.notStored, .completed, .notStored, .due, .upcoming])
        #expect(standings[0].completedBy == [.app, .unstoredResponse], "every source is shown")
        #expect(standings[1].completedBy == [.response, .unstoredResponse])
        // Once stored, the same response completes its run.
        let stored = ResponseArrival(activityId: "a", runId: 1, receivedAt: Self.at(0.6), finishedAt: nil, offsetMinutes: nil).completion
        #expect(RunStates.classify(Self.runs, completions: [stored], now: Self.at(3.5), leftAt: nil).first?.state == .completed)
    }

    @Test func runsOpenWhenTheParticipantLeftExpireAndLaterOnesAreNotTheirs() {
        let standings = RunStates.classify(Self.runs, completions: [], now: Self.at(4.5), leftAt: Self.at(2.5))
        #expect(standings.map(\.run.runId) == [1, 2, 3])
        #expect(standings.map(\.state) == [.missed, .missed, .expired])
    }

    @Test func aCompletionWithoutARunIdGoesToTheLatestRunOpenWhenItArrived() {
        // Two overlapping runs: a weekly one and, inside it, a second that opened later.
        let runs = [
            ActivityRun(activityId: "a", runId: 1, start: Self.at(0), end: Self.at(7)),
            ActivityRun(activityId: "a", runId: 2, start: Self.at(2), end: Self.at(9)),
        ]
        let completion = RunCompletion(activityId: "a", runId: nil, source: .response, at: Self.at(3))
        let standings = RunStates.classify(runs, completions: [completion], now: Self.at(10), leftAt: nil)
        #expect(standings.map(\.state) == [.missed, .completed])
        // Arriving outside every run, it completes none.
        let outside = RunCompletion(activityId: "a", runId: nil, source: .response, at: Self.at(20))
        #expect(RunStates.classify(runs, completions: [outside], now: Self.at(30), leftAt: nil).map(\.state) == [.missed, .missed])
    }

    @Test func anOpenRunIsDueUntilCompleted() {
        let open = [ActivityRun(activityId: "a", runId: 1, start: Self.at(0), end: nil)]
        #expect(RunStates.classify(open, completions: [], now: Self.at(400), leftAt: nil).map(\.state) == [.due])
    }

    @Test func instantsAreWrittenWithTheZonesOffsetThatDay() throws {
        let melbourne = try #require(TimeZone(identifier: "Australia/Melbourne"))
        let stJohns = try #require(TimeZone(identifier: "America/St_Johns"))
        let instant = try #require(ISO8601DateFormatter().date(from: "2026-04-04T22:00:00Z"))
        #expect(WallClock.rfc3339(instant, in: melbourne) == "2026-04-05T08:00:00+10:00")
        #expect(WallClock.rfc3339(instant.addingTimeInterval(-86_400), in: melbourne) == "2026-04-04T09:00:00+11:00")
        #expect(WallClock.rfc3339(instant, in: stJohns) == "2026-04-04T19:30:00-02:30")
        #expect(WallClock.rfc3339(instant, in: .gmt) == "2026-04-04T22:00:00+00:00")
    }
}
