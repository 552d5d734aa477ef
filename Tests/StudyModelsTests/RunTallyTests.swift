import Foundation
import StudyModels
import Testing

/// `RunTally`: what registration keeps of a participant's timeline, per activity: the counts,
/// the misses in a row, the run due now, the next run, calendar weeks in their zone, and when the
/// counts next change.
@Suite struct RunTallyTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    /// `yyyy-MM-ddTHH:mm` in Melbourne.
    static func local(_ text: String) -> Date {
        LocalTimes.instant(localDateTime: text, in: melbourne)!
    }

    static func run(_ activity: String, _ id: Int, _ start: String, _ end: String?) -> ActivityRun {
        ActivityRun(activityId: activity, runId: id, start: local(start), end: end.map(local))
    }

    @Test func aWeekOfDailyRunsIsCountedByStateWithTheMissesSinceTheLastCompletedOne() throws {
        // Daily runs from Friday 2026-03-20 (its week's Monday: the 16th) to Wednesday the 25th.
        let runs = (0..<6).map { day in
            Self.run("daily", day + 1, String(format: "2026-03-%02dT08:00", 20 + day), String(format: "2026-03-%02dT20:00", 20 + day))
        } + [Self.run("weekly", 1, "2026-03-20T09:00", "2026-03-27T09:00")]
        let completions = [
            RunCompletion(activityId: "daily", runId: 1, source: .app, at: Self.local("2026-03-20T09:00")),
            RunCompletion(activityId: "daily", runId: nil, source: .response, at: Self.local("2026-03-22T10:00")),
        ]
        let now = Self.local("2026-03-24T12:00")
        let standings = RunStates.classify(runs, completions: completions, now: now, leftAt: nil)
            .sorted { ($0.run.start, $0.run.activityId) < ($1.run.start, $1.run.activityId) }
        let timeline = ParticipantTimeline(zone: ParticipantZone(zone: Self.melbourne, source: .inferred), standings: standings)
        let tally = RunTally.count(timeline, activityIds: ["daily", "weekly", "never"], completions: completions, now: now)
        try #require(tally.activities.count == 3)
        let daily = tally.activities[0]
        // Runs 1 and 3 completed, 2 missed, 4 missed, 5 due now, 6 to come.
        #expect((daily.opened, daily.completed, daily.missed, daily.expired) == (5, 2, 2, 0))
        #expect(daily.missedInARow == 1, "run 4, since run 3 was completed")
        #expect(daily.due?.runId == 5)
        #expect(daily.nextRunAt == Self.local("2026-03-25T08:00"))
        #expect(daily.lastCompletedAt == Self.local("2026-03-22T10:00"))
        // Friday to Sunday in the week of Monday the 16th, Monday and Tuesday in the next.
        let monday16 = GregorianDays.days(year: 2026, month: 3, day: 16)
        #expect(daily.weeks == [
            .init(monday: monday16, opened: 3, completed: 2, missed: 1, expired: 0),
            .init(monday: monday16 + 7, opened: 2, completed: 0, missed: 1, expired: 0),
        ])
        let weekly = tally.activities[1]
        #expect((weekly.opened, weekly.completed, weekly.missed, weekly.missedInARow) == (1, 0, 0, 0))
        #expect(weekly.due?.runId == 1)
        // An activity with no runs yet is listed with nothing counted.
        #expect(tally.activities[2] == ActivityTally(activityId: "never"))
        // The due daily run closes at 20:00: the soonest change.
        #expect(tally.nextChange == Self.local("2026-03-24T20:00"))
    }

    /// A run done whose answers could not be stored is counted apart: opened, not completed, not
    /// missed, and it ends a streak of misses (the participant did it).
    @Test func aRunWhoseAnswersWereNotStoredIsCountedApart() throws {
        let runs = (0..<3).map { day in
            Self.run("daily", day + 1, String(format: "2026-03-%02dT08:00", 20 + day), String(format: "2026-03-%02dT20:00", 20 + day))
        }
        let completions = [
            ResponseArrival(
                activityId: "daily", runId: 2, receivedAt: Self.local("2026-03-21T09:00"), finishedAt: nil, offsetMinutes: nil,
                stored: false
            ).completion
        ]
        let now = Self.local("2026-03-23T12:00")
        let standings = RunStates.classify(runs, completions: completions, now: now, leftAt: nil)
        let timeline = ParticipantTimeline(zone: ParticipantZone(zone: Self.melbourne, source: .inferred), standings: standings)
        let tally = RunTally.count(timeline, activityIds: ["daily"], completions: completions, now: now)
        try #require(tally.activities.count == 1)
        let daily = tally.activities[0]
        #expect((daily.opened, daily.completed, daily.missed, daily.expired, daily.notStored) == (3, 0, 2, 0, 1))
        #expect(daily.missedInARow == 1, "run 3 only: run 2 was done")
        let monday16 = GregorianDays.days(year: 2026, month: 3, day: 16)
        #expect(daily.weeks == [.init(monday: monday16, opened: 3, completed: 0, missed: 2, expired: 0, notStored: 1)])
        #expect(RunWeek(week: "2026-03-16", opened: 3, completed: 0, missed: 2, expired: 0, notStored: 1).adherencePercent == 0)
    }

    @Test func mondaysAreFoundForEveryDayOfTheWeekAndBefore1970() {
        // 1970-01-01 was a Thursday; 1969-12-29 the Monday of its week.
        #expect(RunTally.monday(of: 0) == -3)
        for day in -10...20 {
            let monday = RunTally.monday(of: day)
            #expect((0..<7).contains(day - monday))
            #expect(RunTally.monday(of: monday) == monday)
        }
        #expect(RunTally.monday(of: GregorianDays.days(year: 2026, month: 11, day: 29)) == GregorianDays.days(year: 2026, month: 11, day: 23))
    }

    @Test func runIdsAreReadAsTheAppsSendThem() {
        #expect(ResponseArrival.runNumber("3") == 3)
        #expect(ResponseArrival.runNumber("0007") == 7)
        for text in ["", "0", "-1", "1.5", "１", "1234567890", "9\r\n", "+4"] {
            #expect(ResponseArrival.runNumber(text) == nil, "\(text)")
        }
    }
}
