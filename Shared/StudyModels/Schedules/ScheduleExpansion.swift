import Foundation

/// One expansion in progress: the runs so far and the next run id, for each frequency's rule.
struct ScheduleExpansion {
    let activityId: String
    let participant: ParticipantClock
    let bounds: ActivityBounds
    /// No run that starts at or after it is returned: the caller's horizon, or the activity's end.
    let horizon: Date
    /// Runs that ended before it are numbered but not kept.
    let keptFrom: Date
    /// The most runs kept; the expansion stops, and says where (`cutAt`), at the next.
    let keepLimit: Int
    private(set) var runs: [ActivityRun] = []
    /// Where the expansion stopped short of its horizon: the start of the first run it numbered
    /// no more (`ScheduleEngine.maxRuns` numbered) or kept no more (`keepLimit` kept). Every run
    /// that starts before it was expanded.
    private(set) var cutAt: Date?
    private var nextId = 1
    private var numbered = 0

    /// The participant's zone's offsets, read once for the whole expansion.
    private let zone: ZoneOffsets

    init(activityId: String, participant: ParticipantClock, bounds: ActivityBounds, horizon: Date, keptFrom: Date, keepLimit: Int) {
        self.activityId = activityId
        self.participant = participant
        self.bounds = bounds
        self.horizon = horizon
        self.keptFrom = keptFrom
        self.keepLimit = keepLimit
        zone = ZoneOffsets.of(participant.zone)
    }

    /// When the participant's runs begin: the activity's start, or their joining if later (the
    /// apps' `startTime`).
    private var opens: Date { max(bounds.start ?? participant.joinedAt, participant.joinedAt) }

    /// Numbers the next run and returns it (its end no later than the activity's) unless it
    /// starts at or after the horizon, or the expansion is full; false then, to stop the caller.
    /// `numberedAnyway`: a run past the horizon still takes its number (manual runs are numbered in
    /// document order, not in time order). `returned`: false numbers the run without returning it.
    private mutating func append(start: Date, end: Date?, numberedAnyway: Bool = false, returned: Bool = true) -> Bool {
        guard start < horizon else {
            if numberedAnyway { nextId += 1 }
            return false
        }
        guard numbered < ScheduleEngine.maxRuns else {
            cutAt = min(cutAt ?? start, start)
            return false
        }
        let closes: Date? = switch (end, bounds.end) {
        case (let end?, let activityEnd?): min(end, activityEnd)
        case (let end, let activityEnd): end ?? activityEnd
        }
        if returned, (closes ?? .distantFuture) >= keptFrom {
            guard runs.count < keepLimit else {
                cutAt = min(cutAt ?? start, start)
                return false
            }
            runs.append(ActivityRun(activityId: activityId, runId: nextId, start: start, end: closes))
        }
        numbered += 1
        nextId += 1
        return true
    }

    /// One time, and ongoing: one run from when the participant's runs begin; for a one-time
    /// activity in the Android app, from the activity's own start even for a participant who
    /// joined after it (`SurveyScheduler.setOneTimeRun`).
    mutating func single(oneTime: Bool) {
        let start = oneTime && participant.platform == .android ? bounds.start ?? opens : opens
        _ = append(start: start, end: bounds.end)
    }

    /// A run open when the participant joined starts, in the Android app, when they joined
    /// (`SurveyScheduler`: `setDailyRun`, `setWeeklyRun`, `setScheduledRun` give it the joining
    /// time); the iOS app keeps its own start.
    private func joinedDuring(_ start: Date) -> Date {
        participant.platform == .android ? max(start, participant.joinedAt) : start
    }

    /// Each day from the day the participant's runs begin, each window in turn; windows that
    /// ended before then are not runs (both apps). A window the clocks skip whole (one inside the
    /// hour lost to summer time, any on Samoa's 2011-12-30) is numbered, as the apps, which keep
    /// one offset, number it, but not returned: the wall clock never shows it.
    mutating func daily(windows: [(start: Int, end: Int)]) {
        guard !windows.isEmpty, let first = WallClock(opens, in: zone) else { return }
        var day = first.day
        while true {
            for window in windows {
                guard let start = WallClock(day: day, seconds: window.start).resolve(in: zone),
                    let end = WallClock(day: day, seconds: window.end).resolve(in: zone)
                else { return }
                if end.instant < opens { continue }
                guard append(start: joinedDuring(start.instant), end: end.instant, returned: !(start.skipped && end.skipped)) else { return }
            }
            day += 1
        }
    }

    /// Seven-day runs at the activity's first start's wall-clock time and weekday in the
    /// participant's zone, each ending a second before the next. For a participant who joined
    /// after the activity started, the apps differ (`Schedule.setWeeklyRuns`,
    /// `SurveyScheduler.setWeeklyRun`): the iOS app's runs are on the activity's weekday from the
    /// Sunday-to-Saturday week they joined in, at the time of day they joined (run 1 can start
    /// before they joined, or after); the Android app's run 1 is from when they joined to a
    /// second before the activity's next weekday and time, the later runs at those.
    mutating func weekly() {
        guard let start = bounds.start, let origin = WallClock(start, in: zone) else { return }
        var first = origin
        var week = 0
        if participant.joinedAt > start, let joined = WallClock(participant.joinedAt, in: zone) {
            switch participant.platform {
            case .ios:
                let sunday = joined.day - (joined.weekday - 1)
                first = WallClock(day: sunday + (origin.weekday - 1), seconds: joined.seconds)
            case .android:
                week = max(Self.floorDivide(joined.day - origin.day, 7), 0)
            }
        }
        while true {
            guard let runStart = WallClock(day: first.day + 7 * week, seconds: first.seconds).resolve(in: zone)?.instant,
                let next = WallClock(day: first.day + 7 * (week + 1), seconds: first.seconds).resolve(in: zone)?.instant,
                append(start: joinedDuring(runStart), end: next.addingTimeInterval(-1))
            else { return }
            week += 1
        }
    }

    /// Monthly runs, each ending a second before the next. The iOS app (`Schedule.setMonthlyRuns`)
    /// counts calendar months from when the participant's runs begin (for one who joined late,
    /// their joining): the 31st falls back to a shorter month's last day and comes back. The
    /// Android app (`SurveyScheduler.setMonthlyRun`) counts from the activity's start, numbering
    /// the runs that ended before the participant joined though it never offers them, and steps
    /// with a lenient `Calendar` (`androidMonthAfter`).
    mutating func monthly() {
        switch participant.platform {
        case .ios:
            guard let origin = WallClock(opens, in: zone) else { return }
            var month = 0
            while true {
                guard let runStart = origin.addingMonths(month).resolve(in: zone)?.instant,
                    let next = origin.addingMonths(month + 1).resolve(in: zone)?.instant,
                    append(start: runStart, end: next.addingTimeInterval(-1))
                else { return }
                month += 1
            }
        case .android:
            guard let start = bounds.start, var current = WallClock(start, in: zone) else { return }
            let startDayOfMonth = GregorianDays.civil(days: current.day).day
            let endsOn31st = bounds.end.flatMap { WallClock($0, in: zone) }.map { GregorianDays.civil(days: $0.day).day == 31 } ?? false
            while true {
                let next = Self.androidMonthAfter(current, startDayOfMonth: startDayOfMonth, endsOn31st: endsOn31st)
                guard let runStart = current.resolve(in: zone)?.instant, let nextStart = next.resolve(in: zone)?.instant else { return }
                let end = nextStart.addingTimeInterval(-1)
                guard append(start: runStart, end: end, returned: end >= participant.joinedAt) else { return }
                current = next
            }
        }
    }

    /// The start of the Android app's monthly run after the one starting at `current`, by the
    /// arithmetic of `SurveyScheduler.setMonthlyRun` on a lenient `java.util.Calendar` (a day
    /// past its month's end rolls into the next month; adding a month keeps the day, or the new
    /// month's last day):
    /// - from 28 or 29 February, the "58th" or "59th" of February: 30 (or, in a leap year from
    ///   the 28th, 29) March;
    /// - when the activity ends on a 31st, from April, June, September or November, that month's
    ///   "60th": the 30th of the next month;
    /// - otherwise the start's day of the month set in the current month (rolling over where the
    ///   month is shorter) and one month added: from the 31st, 31 August, 30 September, 1
    ///   November, 1 January, 28 February, 30 March.
    /// The time of day stays the start's. The app compares English month abbreviations
    /// (`DateFormat.format("MMM")`): a phone in another language takes the last branch always.
    static func androidMonthAfter(_ current: WallClock, startDayOfMonth: Int, endsOn31st: Bool) -> WallClock {
        let (year, month, day) = GregorianDays.civil(days: current.day)
        let firstOfMonth = GregorianDays.days(year: year, month: month, day: 1)
        if month == 2, day == 28 || day == 29 {
            return WallClock(day: firstOfMonth + (day == 28 ? 57 : 58), seconds: current.seconds)
        }
        if endsOn31st, [4, 6, 9, 11].contains(month) {
            return WallClock(day: firstOfMonth + 59, seconds: current.seconds)
        }
        return WallClock(day: firstOfMonth + startDayOfMonth - 1, seconds: current.seconds).addingMonths(1)
    }

    /// Manually scheduled runs, in the document's order: a run that ended before the participant
    /// joined, or does not start before the activity's end, is not theirs and takes no number.
    mutating func listed(_ listed: [ActivityBounds]) {
        for run in listed {
            // A run whose times do not read (a document stored before they were checked) is none.
            guard let start = run.start, let end = run.end, end >= participant.joinedAt, start < end else { continue }
            if let activityEnd = bounds.end, start >= activityEnd { continue }
            _ = append(start: joinedDuring(start), end: end, numberedAnyway: true)
        }
    }

    static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
