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

    /// One time, and ongoing: one run from when the participant's runs begin.
    mutating func single() {
        _ = append(start: opens, end: bounds.end)
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
                guard append(start: start.instant, end: end.instant, returned: !(start.skipped && end.skipped)) else { return }
            }
            day += 1
        }
    }

    /// Seven-day runs at the activity's first start's wall-clock time and weekday in the
    /// participant's zone, each ending a second before the next. For a participant who joined
    /// after the activity started, run 1 is, in the iOS app, the one on the activity's weekday in
    /// the Sunday-to-Saturday week they joined in (which can start after they joined); in the
    /// Android app, the one on the last of the activity's weekdays on or before the day they
    /// joined.
    mutating func weekly() {
        guard let start = bounds.start, let origin = WallClock(start, in: zone) else { return }
        var week = 0
        if participant.joinedAt > start, let joined = WallClock(participant.joinedAt, in: zone) {
            switch participant.platform {
            case .ios:
                let sunday = joined.day - (joined.weekday - 1)
                week = Self.floorDivide(sunday + (origin.weekday - 1) - origin.day, 7)
            case .android:
                week = Self.floorDivide(joined.day - origin.day, 7)
            }
            week = max(week, 0)
        }
        while true {
            guard let runStart = WallClock(day: origin.day + 7 * week, seconds: origin.seconds).resolve(in: zone)?.instant,
                let next = WallClock(day: origin.day + 7 * (week + 1), seconds: origin.seconds).resolve(in: zone)?.instant,
                append(start: runStart, end: next.addingTimeInterval(-1))
            else { return }
            week += 1
        }
    }

    /// Runs a calendar month apart (the 31st falls back to a shorter month's last day, each run
    /// counted from the first, not from the one before), each ending a second before the next.
    /// The iOS app counts them from when the participant's runs begin (for one who joined late,
    /// their joining), the Android app from the activity's start, numbering the runs that ended
    /// before the participant joined though it never offers them.
    mutating func monthly() {
        let first = participant.platform == .ios ? opens : bounds.start
        guard let first, let origin = WallClock(first, in: zone) else { return }
        var month = 0
        while true {
            guard let runStart = origin.addingMonths(month).resolve(in: zone)?.instant,
                let next = origin.addingMonths(month + 1).resolve(in: zone)?.instant
            else { return }
            let end = next.addingTimeInterval(-1)
            guard append(start: runStart, end: end, returned: end >= participant.joinedAt) else { return }
            month += 1
        }
    }

    /// Manually scheduled runs, in the document's order: a run that ended before the participant
    /// joined, or does not start before the activity's end, is not theirs and takes no number.
    mutating func listed(_ listed: [ActivityBounds]) {
        for run in listed {
            // A run whose times do not read (a document stored before they were checked) is none.
            guard let start = run.start, let end = run.end, end >= participant.joinedAt, start < end else { continue }
            if let activityEnd = bounds.end, start >= activityEnd { continue }
            _ = append(start: start, end: end, numberedAnyway: true)
        }
    }

    static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
