import Foundation

/// Expands an activity's schedule into one participant's runs, by the rules the MyStudies apps
/// generate them with (docs/schedules.md): the same run ids the apps send as `activityRunId`,
/// at wall-clock times in the participant's zone, correct across every change of offset.
/// Pure: no clock, no I/O; the same inputs give the same runs on any replica.
public struct ScheduleEngine: Sendable {
    /// The study's zone: the zone of an absolute schedule's dates and of manual runs.
    public let studyZone: TimeZone
    /// When the study launched (a one-time activity may open then; an ongoing one does).
    public let launchedAt: Date?

    /// The most runs one expansion numbers: a run a minute for ten weeks, far more than a daily
    /// schedule of a dozen windows makes in a decade, so no document can make an expansion take
    /// unbounded time. An expansion that reaches it stops, and says where (`Expansion.cutAt`).
    public static let maxRuns = 100_000

    /// One activity's runs for one participant, and where the expansion stopped short of its
    /// horizon, if it did: every run that starts before `cutAt` is there.
    public struct Expansion: Sendable {
        public var runs: [ActivityRun]
        public var cutAt: Date?
    }

    /// The anchor dates an expansion takes (`GregorianDays` numbering): years 1 to 9999, every
    /// date an answer or a property can carry, so the days and months added to one stay far from
    /// overflowing.
    public static let anchorDays = GregorianDays.days(year: 1, month: 1, day: 1)...GregorianDays.days(year: 9999, month: 12, day: 31)

    public init(studyZone: TimeZone, launchedAt: Date?) {
        self.studyZone = studyZone
        self.launchedAt = launchedAt
    }

    /// The participant's runs of `activity` that start before `horizon`, in run-id order.
    /// `anchorDay`: their anchor date (`GregorianDays` numbering) for an anchor-relative schedule
    /// (nil takes the enrolment date for `enrollmentDate`; any other anchor without a date has no
    /// runs yet, as in the apps).
    public func runs(of activity: StudyActivity, for participant: ParticipantClock, anchorDay: Int? = nil, before horizon: Date) -> [ActivityRun] {
        expand(activity, for: participant, anchorDay: anchorDay, before: horizon).runs
    }

    /// As `runs(of:for:anchorDay:before:)`, keeping only the runs that end at or after
    /// `keptFrom` (earlier ones are numbered, not kept) and at most `keepLimit` of them: memory
    /// is bounded by what is kept, time by `maxRuns` numbered.
    public func expand(
        _ activity: StudyActivity, for participant: ParticipantClock, anchorDay: Int? = nil, before horizon: Date,
        keptFrom: Date = .distantPast, keepLimit: Int = ScheduleEngine.maxRuns
    ) -> Expansion {
        let schedule = activity.schedule
        let bounds: ActivityBounds
        var anchor: Int?
        if let source = schedule.anchor?.source {
            guard let day = anchorDay ?? (source == .enrollmentDate ? participant.enrolmentDay : nil), Self.anchorDays.contains(day)
            else { return Expansion(runs: [], cutAt: nil) }
            anchor = day
            bounds = .relative(schedule, anchorDay: day, zone: participant.zone)
        } else {
            bounds = .absolute(schedule, zone: studyZone, launchedAt: launchedAt)
        }
        // A participant who joins after an activity ended never has it (both apps).
        if let end = bounds.end, end < participant.joinedAt { return Expansion(runs: [], cutAt: nil) }
        var expansion = ScheduleExpansion(
            activityId: activity.activityId, participant: participant, bounds: bounds, horizon: min(horizon, bounds.end ?? horizon),
            keptFrom: keptFrom, keepLimit: keepLimit)
        switch schedule.frequency {
        case .oneTime, .ongoing:
            expansion.single(oneTime: schedule.frequency == .oneTime)
        case .daily:
            expansion.daily(windows: Self.dailyWindows(schedule))
        case .weekly:
            expansion.weekly()
        case .monthly:
            expansion.monthly()
        case .manual:
            let listed = anchor.map { ActivityBounds.anchorRuns(schedule, anchorDay: $0, zone: participant.zone) }
                ?? (schedule.runs ?? []).map { run in
                    ActivityBounds(
                        start: LocalTimes.instant(localDateTime: run.start, in: studyZone),
                        end: LocalTimes.instant(localDateTime: run.end, in: studyZone))
                }
            expansion.listed(listed)
        }
        return Expansion(runs: expansion.runs, cutAt: expansion.cutAt)
    }

    /// A daily schedule's windows as seconds of the day: each from its time until a second before
    /// the next, the last until 23:59:59 (what the study service serves as `frequency.runs`).
    /// A timeout (`expiresAfterMilliseconds`, the schema app's) ends each window sooner: its last
    /// second is the one before the timeout runs out, and a window never crosses midnight, since
    /// the MyStudies apps read a window as two times of one day.
    public static func dailyWindows(_ schedule: Schedule) -> [(start: Int, end: Int)] {
        var windows: [(start: Int, end: Int)] = []
        // A document stored before its times were checked in order: a time not after the one
        // before it is dropped rather than made into a window that ends before it starts.
        for time in (schedule.dailyTimes ?? []).compactMap(LocalTimes.time) where time > (windows.last?.start ?? -1) {
            if !windows.isEmpty { windows[windows.count - 1].end = time - 1 }
            windows.append((time, ActivityBounds.lastSecond))
        }
        if let seconds = timeoutSeconds(schedule) {
            for index in windows.indices {
                windows[index].end = min(windows[index].end, windows[index].start + seconds - 1)
            }
        }
        return windows
    }

    /// The timeout in whole seconds (at least one, at most a day: longer changes no window), or
    /// nil without one. A stored document out of the validator's bounds is read, not trusted.
    static func timeoutSeconds(_ schedule: Schedule) -> Int? {
        guard let milliseconds = schedule.expiresAfterMilliseconds, milliseconds > 0 else { return nil }
        return min(max(milliseconds / 1_000, 1), 86_400)
    }
}

extension ScheduleEngine {
    /// A schema-app participant's runs: each task of their plan the app lists (a sticky module's
    /// hidden tasks are not), numbered with its task id (101, 102, ...: what the app posts back),
    /// under the activity id of its module (`SchemaImport.activityIds`), open until it times out
    /// or, without a timeout, for as long as the study runs.
    public static func runs(of plan: SchemaTaskPlan, activityIds: [String]) -> [ActivityRun] {
        plan.tasks.compactMap { task in
            guard !task.hidden, activityIds.indices.contains(task.moduleIndex) else { return nil }
            return ActivityRun(
                activityId: activityIds[task.moduleIndex], runId: task.taskId, start: task.time,
                end: task.expiresAfterMilliseconds.map { task.time.addingTimeInterval(Double($0) / 1_000) })
        }
    }
}
