import Foundation
import StudyModels
import Testing

/// `ScheduleEngine`, case by case: each rule of docs/schedules.md with runs worked out by hand
/// (instants in UTC; the comments give the wall clocks).
@Suite struct ScheduleEngineTests {
    static func utc(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text) ?? .distantPast
    }

    static func text(_ date: Date?) -> String {
        guard let date else { return "open" }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = .gmt
        return formatter.string(from: date)
    }

    /// Each run as `id start end` in UTC.
    static func expand(
        _ schedule: Schedule, studyZone: String = "UTC", zone: String, joined: String, platform: Platform = .ios,
        anchorDay: Int? = nil, launched: String? = nil, horizon: String = "2040-01-01T00:00:00Z"
    ) throws -> [String] {
        let engine = ScheduleEngine(studyZone: try #require(TimeZone(identifier: studyZone)), launchedAt: launched.map(utc))
        let participant = ParticipantClock(zone: try #require(TimeZone(identifier: zone)), joinedAt: utc(joined), platform: platform)
        let activity = StudyActivity(activityId: "a", title: "A", schedule: schedule, steps: [])
        return engine.runs(of: activity, for: participant, anchorDay: anchorDay, before: utc(horizon))
            .map { "\($0.runId) \(text($0.start)) \(text($0.end))" }
    }

    static func daily(_ start: String, _ end: String, _ times: [String]) -> Schedule {
        var schedule = Schedule(frequency: .daily)
        (schedule.startDate, schedule.endDate, schedule.dailyTimes) = (start, end, times)
        return schedule
    }

    static func repeating(_ frequency: Schedule.Frequency, _ start: String, _ time: String, count: Int) -> Schedule {
        var schedule = Schedule(frequency: frequency)
        (schedule.startDate, schedule.time, schedule.repeatCount) = (start, time, count)
        return schedule
    }

    @Test func aDailyRunStaysAtItsWallClockTimeWhenSummerTimeEnds() throws {
        // Melbourne leaves summer time on 2026-04-05 (03:00 +11 becomes 02:00 +10).
        let runs = try Self.expand(
            Self.daily("2026-04-04", "2026-04-06", ["08:00"]), studyZone: "Australia/Melbourne", zone: "Australia/Melbourne",
            joined: "2026-04-01T00:00:00Z")
        #expect(runs == [
            "1 2026-04-03T21:00:00Z 2026-04-04T12:59:59Z",  // 04-04 08:00 to 23:59:59 +11
            "2 2026-04-04T22:00:00Z 2026-04-05T13:59:59Z",  // 04-05 08:00 to 23:59:59 +10 (a 25-hour day)
            "3 2026-04-05T22:00:00Z 2026-04-06T13:59:59Z",  // 04-06 08:00 +10
        ])
    }

    @Test func aWeeklyRunKeepsItsWeekdayAndTimeAcrossTheChange() throws {
        // Mondays 09:00 Melbourne from 2026-03-30, three weeks.
        let runs = try Self.expand(
            Self.repeating(.weekly, "2026-03-30", "09:00", count: 3), studyZone: "Australia/Melbourne", zone: "Australia/Melbourne",
            joined: "2026-03-01T00:00:00Z")
        #expect(runs == [
            "1 2026-03-29T22:00:00Z 2026-04-05T22:59:59Z",  // 03-30 09:00 +11 to 04-06 08:59:59 +10
            "2 2026-04-05T23:00:00Z 2026-04-12T22:59:59Z",
            "3 2026-04-12T23:00:00Z 2026-04-19T22:59:59Z",  // the third ends with the activity
        ])
    }

    @Test func monthlyRunsOnThe31stFallBackToShorterMonthsLastDays() throws {
        let runs = try Self.expand(Self.repeating(.monthly, "2027-01-31", "10:00", count: 4), zone: "UTC", joined: "2027-01-01T00:00:00Z")
        #expect(runs == [
            "1 2027-01-31T10:00:00Z 2027-02-28T09:59:59Z",
            "2 2027-02-28T10:00:00Z 2027-03-31T09:59:59Z",  // counted from the 31st, not from the 28th
            "3 2027-03-31T10:00:00Z 2027-04-30T09:59:59Z",
            "4 2027-04-30T10:00:00Z 2027-05-31T09:59:59Z",
        ])
        let leap = try Self.expand(Self.repeating(.monthly, "2024-01-31", "10:00", count: 2), zone: "UTC", joined: "2024-01-01T00:00:00Z")
        #expect(leap == ["1 2024-01-31T10:00:00Z 2024-02-29T09:59:59Z", "2 2024-02-29T10:00:00Z 2024-03-31T09:59:59Z"])
    }

    @Test func lordHowesHalfHourSkipMovesATimeByHalfAnHourAndDropsAWindowItSkipsWhole() throws {
        // 2026-10-04 02:00 +10:30 becomes 02:30 +11.
        let runs = try Self.expand(
            Self.daily("2026-10-04", "2026-10-04", ["02:00", "02:20"]), studyZone: "Australia/Lord_Howe", zone: "Australia/Lord_Howe",
            joined: "2026-10-01T00:00:00Z")
        // Window 1, 02:00 to 02:19:59, never shows on the clock: numbered, not a run. Window 2
        // starts at 02:20, read as 02:50 +11.
        #expect(runs == ["2 2026-10-03T15:50:00Z 2026-10-04T12:59:59Z"])
    }

    @Test func stJohnsRunsAreAtMinusThreeThirty() throws {
        let runs = try Self.expand(
            Self.daily("2026-01-15", "2026-01-15", ["08:00"]), studyZone: "America/St_Johns", zone: "America/St_Johns",
            joined: "2026-01-01T00:00:00Z")
        #expect(runs == ["1 2026-01-15T11:30:00Z 2026-01-16T03:29:59Z"])
    }

    @Test func samoasSkippedDayHasNoRunButKeepsItsNumber() throws {
        // 2011-12-29 23:59:59 -10 was followed by 2011-12-31 00:00 +14.
        let runs = try Self.expand(
            Self.daily("2011-12-29", "2011-12-31", ["09:00"]), studyZone: "Pacific/Apia", zone: "Pacific/Apia",
            joined: "2011-12-01T00:00:00Z")
        #expect(runs == ["1 2011-12-29T19:00:00Z 2011-12-30T09:59:59Z", "3 2011-12-30T19:00:00Z 2011-12-31T09:59:59Z"])
    }

    @Test func theTwoAppsNumberALateJoinersWeeklyRunsDifferently() throws {
        // Wednesdays 09:00 UTC from 2026-03-04; joined on Monday 2026-03-16.
        let weekly = Self.repeating(.weekly, "2026-03-04", "09:00", count: 6)
        let ios = try Self.expand(weekly, zone: "UTC", joined: "2026-03-16T12:00:00Z", platform: .ios)
        let android = try Self.expand(weekly, zone: "UTC", joined: "2026-03-16T12:00:00Z", platform: .android)
        // iOS: the Wednesday of the Sunday-to-Saturday week they joined in, after they joined, at
        // the time of day they joined (`Schedule.setWeeklyRuns` shifts the joining instant by days).
        #expect(ios.first == "1 2026-03-18T12:00:00Z 2026-03-25T11:59:59Z")
        #expect(ios.last == "4 2026-04-08T12:00:00Z 2026-04-15T08:59:59Z")  // the sixth week's run, ending with the activity
        // Android: numbered from the last Wednesday on or before the day they joined, run 1 from
        // their joining (`SurveyScheduler.setWeeklyRun`).
        #expect(android.first == "1 2026-03-16T12:00:00Z 2026-03-18T08:59:59Z")
        #expect(android.count == 5)
    }

    @Test func theTwoAppsCountALateJoinersMonthlyRunsFromDifferentStarts() throws {
        let monthly = Self.repeating(.monthly, "2026-01-10", "09:00", count: 6)
        let ios = try Self.expand(monthly, zone: "UTC", joined: "2026-03-20T12:00:00Z", platform: .ios)
        #expect(ios.first == "1 2026-03-20T12:00:00Z 2026-04-20T11:59:59Z")  // from their joining
        let android = try Self.expand(monthly, zone: "UTC", joined: "2026-03-20T12:00:00Z", platform: .android)
        // From the activity's start: runs 1 and 2 ended before they joined and are not theirs.
        #expect(android.first == "3 2026-03-10T09:00:00Z 2026-04-10T08:59:59Z")
        #expect(android.last == "6 2026-06-10T09:00:00Z 2026-07-10T08:59:59Z")
    }

    @Test func aParticipantWhoJoinsDuringAWindowHasItAsRunOne() throws {
        let runs = try Self.expand(
            Self.daily("2026-06-01", "2026-06-02", ["08:00", "14:00", "20:00"]), zone: "UTC", joined: "2026-06-01T15:00:00Z")
        #expect(runs == [
            "1 2026-06-01T14:00:00Z 2026-06-01T19:59:59Z",
            "2 2026-06-01T20:00:00Z 2026-06-01T23:59:59Z",
            "3 2026-06-02T08:00:00Z 2026-06-02T13:59:59Z",
            "4 2026-06-02T14:00:00Z 2026-06-02T19:59:59Z",
            "5 2026-06-02T20:00:00Z 2026-06-02T23:59:59Z",
        ])
    }

    @Test func manualRunsThatEndedBeforeJoiningTakeNoNumber() throws {
        var manual = Schedule(frequency: .manual)
        manual.runs = [
            ScheduledRun(start: "2026-05-01T09:00", end: "2026-05-02T09:00"),
            ScheduledRun(start: "2026-05-10T09:00", end: "2026-05-12T09:00"),
            ScheduledRun(start: "2026-05-20T09:00", end: "2026-05-21T09:00"),
        ]
        let runs = try Self.expand(manual, studyZone: "Europe/London", zone: "UTC", joined: "2026-05-05T00:00:00Z")
        #expect(runs == ["1 2026-05-10T08:00:00Z 2026-05-12T08:00:00Z", "2 2026-05-20T08:00:00Z 2026-05-21T08:00:00Z"])
    }

    @Test func dailyTimesAreTheParticipantsWallClockWhereverTheStudyIs() throws {
        // A New York study; a participant in London has their 08:00 at 08:00 BST.
        let runs = try Self.expand(
            Self.daily("2026-07-01", "2026-07-01", ["08:00"]), studyZone: "America/New_York", zone: "Europe/London",
            joined: "2026-06-01T00:00:00Z")
        #expect(runs == ["1 2026-07-01T07:00:00Z 2026-07-01T22:59:59Z"])
    }

    @Test func anEnrolmentAnchorIsTheDayTheyJoinedOnTheirOwnClock() throws {
        var oneTime = Schedule(frequency: .oneTime, anchor: Anchor(source: .enrollmentDate))
        (oneTime.startDays, oneTime.endDays, oneTime.time) = (1, 3, "10:00")
        // 2026-03-28T13:30Z is 2026-03-29 00:30 in Melbourne: the anchor is the 29th there.
        let runs = try Self.expand(oneTime, zone: "Australia/Melbourne", joined: "2026-03-28T13:30:00Z")
        #expect(runs == ["1 2026-03-29T23:00:00Z 2026-04-01T12:59:59Z"])  // 03-30 10:00 +11 to 04-01 23:59:59 +11
        // An answer's date anchors an activity only once it is known.
        var answer = oneTime
        answer.anchor = Anchor(source: .activityResponse, activityId: "b", key: "when")
        #expect(try Self.expand(answer, zone: "UTC", joined: "2026-03-28T13:30:00Z").isEmpty)
        let anchored = try Self.expand(
            answer, zone: "UTC", joined: "2026-03-28T13:30:00Z", anchorDay: GregorianDays.days(year: 2026, month: 4, day: 10))
        #expect(anchored == ["1 2026-04-11T10:00:00Z 2026-04-13T23:59:59Z"])
    }

    @Test func anOpenScheduleStopsAtTheHorizonOrTheMostRunsAnExpansionReturns() throws {
        var open = Schedule(frequency: .daily, anchor: Anchor(source: .enrollmentDate))
        open.startDays = 0
        open.dailyTimes = (0..<24).map { String(format: "%02d:00", $0) }
        let week = try Self.expand(open, zone: "UTC", joined: "2026-01-01T00:00:00Z", horizon: "2026-01-08T00:00:00Z")
        #expect(week.count == 7 * 24)
        let engine = ScheduleEngine(studyZone: .gmt, launchedAt: nil)
        let century = engine.runs(
            of: StudyActivity(activityId: "a", title: "A", schedule: open, steps: []),
            for: ParticipantClock(zone: .gmt, joinedAt: Self.utc("2026-01-01T00:00:00Z"), platform: .ios),
            before: Self.utc("2126-01-01T00:00:00Z"))
        #expect(century.count == ScheduleEngine.maxRuns)
        #expect(century.last?.runId == ScheduleEngine.maxRuns)
    }

    /// Numbers from outside (an anchor date, a wall clock) far past any date give no runs and no
    /// instant, never an overflow.
    @Test func anAnchorOrAWallClockPastAnyDateGivesNothing() throws {
        var open = Schedule(frequency: .monthly, anchor: Anchor(source: .activityResponse, activityId: "b", key: "when"))
        (open.startDays, open.repeatCount, open.time) = (0, 12, "09:00")
        for day in [Int.max, Int.min, ScheduleEngine.anchorDays.upperBound + 1] {
            #expect(try Self.expand(open, zone: "UTC", joined: "2026-01-01T00:00:00Z", anchorDay: day).isEmpty, "\(day)")
        }
        #expect(try Self.expand(open, zone: "UTC", joined: "2026-01-01T00:00:00Z", anchorDay: ScheduleEngine.anchorDays.upperBound).isEmpty)
        let zone = try #require(TimeZone(identifier: "Australia/Melbourne"))
        #expect(WallClock(day: 0, seconds: .max).instant(in: zone) == nil)
        #expect(WallClock(day: .max, seconds: 0).instant(in: zone) == nil)
        #expect(WallClock(Date(timeIntervalSince1970: 1e300), in: zone) == nil)
    }

    @Test func anActivityThatEndedBeforeTheyJoinedHasNoRuns() throws {
        let runs = try Self.expand(Self.daily("2026-01-01", "2026-01-31", ["08:00"]), zone: "UTC", joined: "2026-02-01T00:00:00Z")
        #expect(runs.isEmpty)
        var oneTime = Schedule(frequency: .oneTime)
        (oneTime.startDate, oneTime.studyLifetime) = ("2026-01-01", true)
        #expect(try Self.expand(oneTime, zone: "UTC", joined: "2026-02-01T10:00:00Z") == ["1 2026-02-01T10:00:00Z open"])
    }

    @Test func aTimeoutEndsEachDailyWindowSoonerButNeverPastMidnight() throws {
        var schedule = Self.daily("2026-03-02", "2026-03-02", ["08:00", "09:00", "22:30"])
        schedule.expiresAfterMilliseconds = 2 * 3_600_000  // two hours
        #expect(try Self.expand(schedule, zone: "UTC", joined: "2026-03-01T00:00:00Z") == [
            "1 2026-03-02T08:00:00Z 2026-03-02T08:59:59Z",  // the next window comes first
            "2 2026-03-02T09:00:00Z 2026-03-02T10:59:59Z",  // two hours
            "3 2026-03-02T22:30:00Z 2026-03-02T23:59:59Z",  // cut at the day's end
        ])
        // Less than a second is a second; a document out of bounds is read as no timeout.
        schedule.expiresAfterMilliseconds = 1
        #expect(ScheduleEngine.dailyWindows(schedule).map(\.end) == [8 * 3_600, 9 * 3_600, 22 * 3_600 + 1_800])
        schedule.expiresAfterMilliseconds = -5
        #expect(ScheduleEngine.dailyWindows(schedule).map(\.end) == [9 * 3_600 - 1, 22 * 3_600 + 1_799, 86_399])
    }
}
