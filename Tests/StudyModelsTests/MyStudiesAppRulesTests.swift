import Foundation
import StudyModels
import Testing

/// The runs each MyStudies app makes, worked out by hand from the apps' own code and not from the
/// engine (docs/schedules.md, A participant's runs): `iOS/MyStudies/MyStudies/Models/ScheduleModel/
/// Schedule.swift`, `Android/app/src/main/java/com/harvard/studyappmodule/surveyscheduler/
/// SurveyScheduler.java` and the study-metadata services the apps were built against
/// (`study-datastore/.../dao/ActivityMetaDataDao.java`), in `GoogleCloudPlatform/fda-mystudies`.
/// Each case crosses a change of offset where it can (New York leaves summer time on
/// 2026-11-01 and starts it on 2027-03-14): the server's runs keep their wall-clock times there,
/// and their ids are the ids the participant's app gives.
@Suite struct MyStudiesAppRulesTests {
    typealias Case = ScheduleEngineTests

    static func schedule(_ frequency: Schedule.Frequency, from start: String, at time: String, until end: String) -> Schedule {
        var schedule = Schedule(frequency: frequency)
        (schedule.startDate, schedule.time, schedule.endDate) = (start, time, end)
        return schedule
    }

    static func ny(_ schedule: Schedule, joined: String, _ platform: Platform) throws -> [String] {
        try Case.expand(schedule, studyZone: "America/New_York", zone: "America/New_York", joined: joined, platform: platform)
    }

    // MARK: One time: the last second of the end date

    /// `getTimeDetailsByActivityIdForQuestionnaire` gives a one-time activity `endDate 23:59:59`
    /// (`DEFAULT_MAX_TIME`): only weekly and monthly activities end at their time of day. Both
    /// apps run it from its `startTime` to that `endTime`.
    @Test func aOneTimeActivityEndsAtTheLastSecondOfItsEndDate() throws {
        let once = Self.schedule(.oneTime, from: "2026-10-30", at: "10:00", until: "2026-11-02")
        for platform in [Platform.ios, .android] {
            // 30 Oct 10:00 EDT to 2 Nov 23:59:59 EST, past the night summer time ended.
            #expect(try Self.ny(once, joined: "2026-10-01T00:00:00Z", platform) == ["1 2026-10-30T14:00:00Z 2026-11-03T04:59:59Z"])
        }
    }

    // MARK: Android's monthly arithmetic

    /// `setMonthlyRun` on a lenient `Calendar`: each next start sets the start's day in the
    /// current month (30 September's "31st" is 1 October) and adds a month; 28 February's next is
    /// February's "58th". From 31 August: 31 Aug, 30 Sep, 1 Nov, 1 Jan, 28 Feb, 30 Mar. iOS's
    /// `setMonthlyRuns` adds whole months to the first start instead, so the two apps' run 3 are
    /// different months.
    @Test func androidsMonthlyRunsFromThe31stFollowItsLenientCalendar() throws {
        let monthly = Self.schedule(.monthly, from: "2026-08-31", at: "09:00", until: "2027-04-10")
        let android = try Self.ny(monthly, joined: "2026-08-01T00:00:00Z", .android)
        #expect(android == [
            "1 2026-08-31T13:00:00Z 2026-09-30T12:59:59Z",  // 31 Aug 09:00 EDT
            "2 2026-09-30T13:00:00Z 2026-11-01T13:59:59Z",  // 30 Sep 09:00 EDT to 1 Nov 08:59:59 EST
            "3 2026-11-01T14:00:00Z 2027-01-01T13:59:59Z",  // 1 Nov 09:00 EST: two months long
            "4 2027-01-01T14:00:00Z 2027-02-28T13:59:59Z",  // 1 Jan
            "5 2027-02-28T14:00:00Z 2027-03-30T12:59:59Z",  // 28 Feb 09:00 EST to 30 Mar 08:59:59 EDT
            "6 2027-03-30T13:00:00Z 2027-04-10T13:00:00Z",  // 30 Mar, ending with the activity
        ])
        let ios = try Self.ny(monthly, joined: "2026-08-01T00:00:00Z", .ios)
        #expect(ios.map { String($0.prefix(12)) } == [
            "1 2026-08-31", "2 2026-09-30", "3 2026-10-31", "4 2026-11-30", "5 2026-12-31", "6 2027-01-31", "7 2027-02-28",
            "8 2027-03-31",
        ])
        #expect(ios[3] == "4 2026-11-30T14:00:00Z 2026-12-31T13:59:59Z")  // 09:00 EST, as 09:00 EDT in August
    }

    /// When the activity ends on a 31st, `setMonthlyRun` sends a run in April, June, September
    /// or November to that month's "60th", the 30th of the next month.
    @Test func androidsMonthlyRunsOfAnActivityEndingOnThe31stSkipToThe30th() throws {
        let monthly = Self.schedule(.monthly, from: "2026-01-31", at: "09:00", until: "2026-12-31")
        let android = try Case.expand(monthly, zone: "UTC", joined: "2026-01-01T00:00:00Z", platform: .android)
        // Each run's start date (`id yyyy-MM-dd...`).
        #expect(android.map { String($0.split(separator: " ")[1].prefix(10)) } == [
            "2026-01-31", "2026-02-28", "2026-03-30", "2026-04-30", "2026-05-30", "2026-06-30", "2026-07-30", "2026-08-31",
            "2026-09-30", "2026-10-30", "2026-11-30", "2026-12-30",
        ])
        #expect(android.last == "12 2026-12-30T09:00:00Z 2026-12-31T09:00:00Z")
    }

    /// From 29 February of a leap year, February's "59th" is 30 March; the runs after keep the
    /// 29th. From the 28th of a leap February, its "58th" is 29 March.
    @Test func androidsMonthlyRunsFromTheEndOfALeapFebruary() throws {
        let from29 = Self.schedule(.monthly, from: "2028-02-29", at: "09:00", until: "2028-06-15")
        #expect(try Case.expand(from29, zone: "UTC", joined: "2028-01-01T00:00:00Z", platform: .android) == [
            "1 2028-02-29T09:00:00Z 2028-03-30T08:59:59Z", "2 2028-03-30T09:00:00Z 2028-04-29T08:59:59Z",
            "3 2028-04-29T09:00:00Z 2028-05-29T08:59:59Z", "4 2028-05-29T09:00:00Z 2028-06-15T09:00:00Z",
        ])
        let from28 = Self.schedule(.monthly, from: "2028-02-28", at: "09:00", until: "2028-04-15")
        #expect(try Case.expand(from28, zone: "UTC", joined: "2028-01-01T00:00:00Z", platform: .android) == [
            "1 2028-02-28T09:00:00Z 2028-03-29T08:59:59Z", "2 2028-03-29T09:00:00Z 2028-04-15T09:00:00Z",
        ])
    }

    // MARK: Weekly, joined late

    /// `setWeeklyRuns` starts from the joining instant and adds the days between its weekday and
    /// the activity's: run 1 is on the activity's weekday of the Sunday-to-Saturday week they
    /// joined in, at the time of day they joined. `setWeeklyRun` starts run 1 at the joining
    /// instant and ends it a second before the activity's next weekday and time.
    @Test func aLateJoinersWeeklyRunsAsEachAppOpensThem() throws {
        // Mondays 09:00 from 19 October; joined Wednesday 28 October at 15:30 EDT.
        let weekly = Self.schedule(.weekly, from: "2026-10-19", at: "09:00", until: "2026-11-30")
        let ios = try Self.ny(weekly, joined: "2026-10-28T19:30:00Z", .ios)
        #expect(ios.prefix(2) == [
            "1 2026-10-26T19:30:00Z 2026-11-02T20:29:59Z",  // Monday 26 Oct 15:30 EDT, before they joined
            "2 2026-11-02T20:30:00Z 2026-11-09T20:29:59Z",  // Monday 2 Nov 15:30 EST
        ])
        #expect(ios.count == 5)
        let android = try Self.ny(weekly, joined: "2026-10-28T19:30:00Z", .android)
        #expect(android.prefix(2) == [
            "1 2026-10-28T19:30:00Z 2026-11-02T13:59:59Z",  // from joining to Monday 2 Nov 08:59:59 EST
            "2 2026-11-02T14:00:00Z 2026-11-09T13:59:59Z",  // Monday 2 Nov 09:00 EST
        ])
        #expect(android.count == 5)
    }

    // MARK: The first run of a participant who joins while one is open

    /// Daily: `setDailyFrequenyRuns` keeps the window's start; `setDailyRun` starts the window
    /// open at joining when they joined. Both number from that window.
    @Test func aWindowOpenAtJoiningStartsThenOnAndroidAndAtItsTimeOnIOS() throws {
        let daily = Case.daily("2026-10-31", "2026-11-02", ["08:00", "20:00"])
        let joined = "2026-10-31T14:15:00Z"  // 10:15 EDT, inside the 08:00 window
        #expect(try Self.ny(daily, joined: joined, .ios).first == "1 2026-10-31T12:00:00Z 2026-10-31T23:59:59Z")
        #expect(try Self.ny(daily, joined: joined, .android).first == "1 2026-10-31T14:15:00Z 2026-10-31T23:59:59Z")
        // The next, across the night summer time ended: 20:00 EDT, then 08:00 EST.
        #expect(try Self.ny(daily, joined: joined, .android).dropFirst().first == "2 2026-11-01T00:00:00Z 2026-11-01T03:59:59Z")
        #expect(try Self.ny(daily, joined: joined, .android).dropFirst(2).first == "3 2026-11-01T13:00:00Z 2026-11-02T00:59:59Z")
    }

    /// Monthly: iOS counts months from the joining instant (`startTime` is the later of the
    /// activity's start and joining); Android from the activity's start, the open run keeping it.
    @Test func aMonthlyRunOpenAtJoining() throws {
        let monthly = Self.schedule(.monthly, from: "2026-09-15", at: "09:00", until: "2027-01-20")
        let joined = "2026-10-20T16:00:00Z"  // 12:00 EDT
        #expect(try Self.ny(monthly, joined: joined, .ios).first == "1 2026-10-20T16:00:00Z 2026-11-20T16:59:59Z")
        #expect(try Self.ny(monthly, joined: joined, .android).first == "2 2026-10-15T13:00:00Z 2026-11-15T13:59:59Z")
    }

    /// One time: iOS opens it when they joined; `setOneTimeRun` gives it the activity's `startTime`.
    @Test func aOneTimeRunOpenAtJoining() throws {
        let once = Self.schedule(.oneTime, from: "2026-10-30", at: "10:00", until: "2026-11-02")
        let joined = "2026-11-01T15:00:00Z"
        #expect(try Self.ny(once, joined: joined, .ios) == ["1 2026-11-01T15:00:00Z 2026-11-03T04:59:59Z"])
        #expect(try Self.ny(once, joined: joined, .android) == ["1 2026-10-30T14:00:00Z 2026-11-03T04:59:59Z"])
    }

    /// Manually scheduled: `setScheduledRuns` keeps the run's start; `setScheduledRun` starts the
    /// run open at joining when they joined.
    @Test func aManualRunOpenAtJoining() throws {
        var manual = Schedule(frequency: .manual)
        manual.runs = [ScheduledRun(start: "2026-10-31T09:00", end: "2026-11-02T09:00")]
        let joined = "2026-11-01T15:00:00Z"
        #expect(try Self.ny(manual, joined: joined, .ios) == ["1 2026-10-31T13:00:00Z 2026-11-02T14:00:00Z"])
        #expect(try Self.ny(manual, joined: joined, .android) == ["1 2026-11-01T15:00:00Z 2026-11-02T14:00:00Z"])
    }
}
