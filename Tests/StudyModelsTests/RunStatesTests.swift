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

    /// What `rfc3339` writes reads back to its instant (to the second), as Foundation's own
    /// ISO 8601 parser reads it, over a century of instants in zones with odd offsets; anything
    /// not of that form reads as nothing.
    @Test func instantsAreReadBackAsFoundationReadsThem() throws {
        let zones = try ["Australia/Melbourne", "America/St_Johns", "Asia/Kathmandu", "Pacific/Honolulu", "Europe/London", "UTC"].map {
            try #require(TimeZone(identifier: $0))
        }
        let foundation = ISO8601DateFormatter()
        var state: UInt64 = 3_339  // the same instants every run
        var checked = 0
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let instant = Date(timeIntervalSince1970: Double((state >> 11) % 4_102_444_800) + 0.75)  // 1970 to 2100
            for zone in zones {
                let text = WallClock.rfc3339(instant, in: zone)
                let read = WallClock.instant(rfc3339: text)
                #expect(read == Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down)), "\(text)")
                #expect(read == foundation.date(from: text), "\(text)")
                checked += 1
            }
        }
        #expect(checked == 12_000)
        #expect(WallClock.instant(rfc3339: "2026-04-04T22:00:00Z") == foundation.date(from: "2026-04-04T22:00:00Z"))
        for text in [
            "", "2026-02-30T00:00:00Z", "2026-04-04T24:00:00Z", "2026-04-04 22:00:00Z", "2026-04-04T22:00:00+1000", "2026-04-04T22:00:00",
            "2026-04-04T22:00:00.5Z", "２026-04-04T22:00:00Z", "2026-04-04T22:00:60Z", "2026-04-04T22:00:00+24:00", "0000-01-01T00:00:00Z",
        ] {
            #expect(WallClock.instant(rfc3339: text) == nil, "\(text)")
        }
    }
}
