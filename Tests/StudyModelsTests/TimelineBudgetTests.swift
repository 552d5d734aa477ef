import Foundation
import StudyModels
import Testing

/// A participant's timeline holds at most `ParticipantTimeline.maxRuns` runs, every activity
/// together (docs/security.md, Budgets): past it, it is cut at a time, says where, and holds
/// every run before that time and none after.
@Suite struct TimelineBudgetTests {
    static let utc = ScheduleEngineTests.utc

    /// `count` daily activities of `times` windows a day (one every 24/times hours), from 2026.
    static func schedule(activities count: Int, times: Int) -> StudySchedule {
        let daily = (0..<times).map { String(format: "%02d:%02d", $0 * 24 / times, ($0 * 24 % times) * 60 / times) }
        return StudySchedule(
            studyId: "BUSY", version: 1, timeZone: "UTC", launchedAt: utc("2026-01-01T00:00:00Z"),
            activities: (0..<count).map {
                StudyActivity(activityId: "a\($0)", title: "A", schedule: ScheduleEngineTests.daily("2026-01-01", "2030-12-31", daily), steps: [])
            })
    }

    static func timeline(_ schedule: StudySchedule, maxRuns: Int, from: String = "2026-01-01T00:00:00Z", to: String = "2026-12-31T00:00:00Z")
        -> ParticipantTimeline
    {
        ParticipantTimeline.build(
            schedule: schedule, joinedAt: utc("2026-01-01T00:00:00Z"), leftAt: nil, platform: .ios, arrivals: [], appCompletions: [],
            from: utc(from), to: utc(to), now: utc("2026-06-01T00:00:00Z"), maxRuns: maxRuns)
    }

    @Test func manyActivitiesTogetherAreCutAtATimeWithEveryRunBeforeIt() throws {
        // 12 activities of 24 windows a day: 288 runs a day, 1,000 runs reached on the 4th day.
        let schedule = Self.schedule(activities: 12, times: 24)
        let timeline = Self.timeline(schedule, maxRuns: 1_000)
        let cutAt = try #require(timeline.cutAt)
        #expect(timeline.standings.count <= 1_000)
        #expect(timeline.standings.allSatisfy { $0.run.start < cutAt })
        // Every run before the cut is there: each activity expanded alone up to the cut.
        let engine = ScheduleEngine(studyZone: .gmt, launchedAt: schedule.launchedAt)
        let clock = ParticipantClock(zone: .gmt, joinedAt: Self.utc("2026-01-01T00:00:00Z"), platform: .ios)
        let expected = schedule.activities.reduce(0) { $0 + engine.runs(of: $1, for: clock, before: cutAt).count }
        #expect(expected > 900, "\(expected)")
        #expect(timeline.standings.count == expected)
        #expect(ScheduleEngineTests.text(cutAt) == "2026-01-04T11:00:00Z", "the start of the 1,001st run by time")
    }

    @Test func aTimelineWithinItsBudgetIsNotCut() {
        let timeline = Self.timeline(Self.schedule(activities: 3, times: 2), maxRuns: 10_000)
        #expect(timeline.cutAt == nil)
        #expect(timeline.standings.count == 3 * 2 * 364)
    }

    /// Runs that ended before `from` are numbered, not kept: a participant who joined long ago
    /// asks for a week and gets the week, however many runs came before it.
    @Test func runsBeforeTheWindowDoNotSpendTheBudget() throws {
        let timeline = Self.timeline(
            Self.schedule(activities: 12, times: 24), maxRuns: 3_000, from: "2026-09-01T00:00:00Z", to: "2026-09-08T00:00:00Z")
        #expect(timeline.cutAt == nil)
        #expect(timeline.standings.count == 12 * 24 * 7)
        // Numbered from joining, as the apps number them: the first run of 1 September is run 5,832 (243 days of 24).
        #expect(timeline.standings.first?.run.runId == 243 * 24 + 1)
    }

    /// One activity whose expansion reaches the engine's own bound says so too.
    @Test func anExpansionPastTheEnginesBoundSaysWhereItStopped() throws {
        // 48 windows a day for ten years: 175,000 runs.
        let times = (0..<48).map { String(format: "%02d:%02d", $0 / 2, $0 % 2 * 30) }
        let activity = StudyActivity(activityId: "a", title: "A", schedule: ScheduleEngineTests.daily("2026-01-01", "2035-12-31", times), steps: [])
        let engine = ScheduleEngine(studyZone: .gmt, launchedAt: Self.utc("2026-01-01T00:00:00Z"))
        let clock = ParticipantClock(zone: .gmt, joinedAt: Self.utc("2026-01-01T00:00:00Z"), platform: .ios)
        let expansion = engine.expand(activity, for: clock, before: Self.utc("2040-01-01T00:00:00Z"))
        #expect(expansion.runs.count == ScheduleEngine.maxRuns)
        let cutAt = try #require(expansion.cutAt)
        #expect(expansion.runs.last.map { $0.start < cutAt } == true)
        #expect(cutAt == expansion.runs.last.map { $0.start.addingTimeInterval(1_800) })
    }
}
