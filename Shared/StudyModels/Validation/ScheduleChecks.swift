/// The checks of an activity's schedule.
struct ScheduleChecks {
    let document: StudyDocument
    let activity: StudyActivity
    let pointer: String

    func run(_ problem: (String, String) -> Void) {
        let schedule = activity.schedule
        if let time = schedule.time, LocalTimes.time(time) == nil { problem("\(pointer)/time", "\"\(time)\" \(TimeWords.isNotATime)") }
        if let anchor = schedule.anchor {
            var anchorProblems: [ValidationProblem] = []
            AnchorCheck.run(anchor, in: document, at: "\(pointer)/anchor", into: &anchorProblems)
            for found in anchorProblems { problem(found.pointer, found.message) }
            if anchor.source == .activityResponse, anchor.activityId == activity.activityId {
                problem("\(pointer)/anchor/activityId", "an activity cannot be anchored to its own answers")
            }
            checkRelative(schedule, problem)
        } else {
            checkAbsolute(schedule, problem)
        }
        if let jitter = schedule.jitterMinutes, !(0...1_440).contains(jitter) {
            problem("\(pointer)/jitterMinutes", "must be 0 to 1440 minutes")
        }
        if let expiry = schedule.expiresAfterMilliseconds, !DocumentBounds.expiresAfterMilliseconds.contains(expiry) {
            problem("\(pointer)/expiresAfterMilliseconds", "must be more than 0 and at most a year (31622400000)")
        }
        checkBounds(schedule, problem)
        let activityIds = Set(document.activities.map(\.activityId))
        for (index, id) in (schedule.unlockAfter ?? []).enumerated() where !activityIds.contains(id) || id == activity.activityId {
            problem("\(pointer)/unlockAfter/\(index)", "\"\(id)\" is not another activity of this study")
        }
    }

    private func checkAbsolute(_ schedule: Schedule, _ problem: (String, String) -> Void) {
        let start = schedule.startDate.flatMap(LocalTimes.sortableDate)
        let end = schedule.endDate.flatMap(LocalTimes.sortableDate)
        if let text = schedule.startDate, start == nil { problem("\(pointer)/startDate", "\"\(text)\" \(TimeWords.isNotADate)") }
        if let text = schedule.endDate, end == nil { problem("\(pointer)/endDate", "\"\(text)\" \(TimeWords.isNotADate)") }
        if let start, let end, end < start { problem("\(pointer)/endDate", "is before the start date") }

        switch schedule.frequency {
        case .oneTime:
            if schedule.startDate == nil, schedule.launchWithStudy != true {
                problem("\(pointer)/startDate", "a one-time activity needs a start date, or to start at the launch")
            }
            if schedule.endDate == nil, schedule.studyLifetime != true {
                problem("\(pointer)/endDate", "a one-time activity needs an end date, or to last until the study ends")
            }
        case .daily:
            requireDates(schedule, problem)
            let times = schedule.dailyTimes ?? []
            if times.isEmpty { problem("\(pointer)/dailyTimes", "a daily activity needs at least one time") }
            guard times.count <= DocumentBounds.maxDailyTimes else {
                problem("\(pointer)/dailyTimes", "at most \(DocumentBounds.maxDailyTimes) times a day (one every half hour); this has \(times.count)")
                break
            }
            var previous = -1
            for (index, time) in times.enumerated() {
                guard let seconds = LocalTimes.time(time) else {
                    problem("\(pointer)/dailyTimes/\(index)", "\"\(time)\" \(TimeWords.isNotATime)")
                    continue
                }
                // The apps and the original servers write HH:mm:ss, always on the minute.
                if seconds % 60 != 0 { problem("\(pointer)/dailyTimes/\(index)", "\"\(time)\" is not a whole minute: \(TimeWords.timeForm)") }
                if seconds <= previous { problem("\(pointer)/dailyTimes/\(index)", "times must be in increasing order") }
                previous = seconds
            }
        case .weekly, .monthly:
            if schedule.startDate == nil { problem("\(pointer)/startDate", "is required") }
            if schedule.time == nil { problem("\(pointer)/time", "is required") }
            if schedule.endDate == nil, (schedule.repeatCount ?? 0) < 1 {
                problem("\(pointer)/repeatCount", "needs a repeat count of at least 1, or an end date")
            }
        case .manual:
            let runs = schedule.runs ?? []
            if runs.isEmpty { problem("\(pointer)/runs", "a manually scheduled activity needs at least one run") }
            for (index, run) in runs.enumerated() {
                let runStart = LocalTimes.dateTime(run.start)
                let runEnd = LocalTimes.dateTime(run.end)
                if runStart == nil { problem("\(pointer)/runs/\(index)/start", "\"\(run.start)\" \(TimeWords.isNotADateTime)") }
                if runEnd == nil { problem("\(pointer)/runs/\(index)/end", "\"\(run.end)\" \(TimeWords.isNotADateTime)") }
                if let runStart, let runEnd, runEnd <= runStart {
                    problem("\(pointer)/runs/\(index)/end", "the run ends before it starts")
                }
            }
        case .ongoing:
            break
        }
    }

    private func checkRelative(_ schedule: Schedule, _ problem: (String, String) -> Void) {
        switch schedule.frequency {
        case .manual:
            let runs = schedule.anchorRuns ?? []
            if runs.isEmpty { problem("\(pointer)/anchorRuns", "a manually scheduled activity needs at least one run") }
            for (index, run) in runs.enumerated() {
                if run.endDays < run.startDays {
                    problem("\(pointer)/anchorRuns/\(index)/endDays", "the run ends before it starts")
                }
                if let time = run.time, LocalTimes.time(time) == nil {
                    problem("\(pointer)/anchorRuns/\(index)/time", "\"\(time)\" \(TimeWords.isNotATime)")
                }
            }
        case .ongoing:
            break
        case .oneTime, .daily, .weekly, .monthly:
            if schedule.startDays == nil { problem("\(pointer)/startDays", "a schedule counted from a participant's date needs the day it starts") }
            if let start = schedule.startDays, let end = schedule.endDays, end < start {
                problem("\(pointer)/endDays", "ends before it starts (day \(end) comes before day \(start))")
            }
            if schedule.frequency == .daily, (schedule.dailyTimes ?? []).isEmpty {
                problem("\(pointer)/dailyTimes", "a daily activity needs at least one time")
            }
            // Served to the apps when given, though neither schedules by them (ContentWarnings).
            if let day = schedule.dayOfWeek, !(1...7).contains(day) {
                problem("\(pointer)/dayOfWeek", "the weekday must be 1 (Sunday) to 7 (Saturday)")
            }
            if let date = schedule.dateOfMonth, !(1...31).contains(date) {
                problem("\(pointer)/dateOfMonth", "the day of the month must be 1 to 31")
            }
        }
    }

    /// Numbers past any study's (`DocumentBounds`), wherever the schedule has them.
    private func checkBounds(_ schedule: Schedule, _ problem: (String, String) -> Void) {
        let days = DocumentBounds.anchorDays
        let rule = "must be \(days.lowerBound) to \(days.upperBound) days"
        if let start = schedule.startDays, !days.contains(start) { problem("\(pointer)/startDays", rule) }
        if let end = schedule.endDays, !days.contains(end) { problem("\(pointer)/endDays", rule) }
        for (index, run) in (schedule.anchorRuns ?? []).enumerated() {
            if !days.contains(run.startDays) { problem("\(pointer)/anchorRuns/\(index)/startDays", rule) }
            if !days.contains(run.endDays) { problem("\(pointer)/anchorRuns/\(index)/endDays", rule) }
        }
        if let count = schedule.repeatCount, !DocumentBounds.repeatCount.contains(count) {
            problem("\(pointer)/repeatCount", "must be 1 to \(DocumentBounds.repeatCount.upperBound)")
        }
    }

    private func requireDates(_ schedule: Schedule, _ problem: (String, String) -> Void) {
        if schedule.startDate == nil { problem("\(pointer)/startDate", "is required") }
        if schedule.endDate == nil { problem("\(pointer)/endDate", "is required") }
    }
}
