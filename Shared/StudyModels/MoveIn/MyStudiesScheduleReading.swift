import Foundation
import JSONText

/// An `activityList` entry's schedule read back into a study document's `Schedule`: the inverse
/// of what the apps are served (docs/moving-in.md, Schedules). Times with offsets become local
/// dates and times of the study's zone; what a schedule here cannot say is reported.
struct MyStudiesScheduleReading {
    let times: WireInstants
    let studyId: String
    /// Where the entry is: `activityList#/activities/<i>`.
    let at: String
    private(set) var findings: [MoveInFinding] = []

    init(zone: TimeZone, studyId: String, at: String) {
        times = WireInstants(zone: zone)
        self.studyId = studyId
        self.at = at
    }

    private mutating func found(_ pointer: String, _ effect: MoveInFinding.Effect, _ message: String) {
        findings.append(MoveInFinding(studyId: studyId, at: at + pointer, effect: effect, message: message))
    }

    /// The schedule of `item`; nil (with the reason reported) when there is none to read.
    mutating func schedule(of item: JSONValue) -> Schedule? {
        let frequencyName = Lenient.text(item["frequency"]?["type"]) ?? ""
        guard let frequency = Schedule.Frequency.allCases.first(where: { $0.wireName == frequencyName }) else {
            found("/frequency/type", .notImported, "the frequency \"\(frequencyName)\" is not one the apps schedule")
            return nil
        }
        var schedule: Schedule
        if Lenient.text(item["schedulingType"]) == "AnchorDate" {
            guard let anchor = anchor(item["anchorDate"]) else { return nil }
            schedule = relative(item, frequency: frequency, anchor: anchor)
        } else {
            schedule = absolute(item, frequency: frequency)
        }
        if Lenient.flag(item["frequency"]?["addNewRuns"]) == true { schedule.addNewRuns = true }
        return schedule
    }

    // MARK: - At absolute dates

    private mutating func absolute(_ item: JSONValue, frequency: Schedule.Frequency) -> Schedule {
        var schedule = Schedule(frequency: frequency)
        let start = times.local(Lenient.text(item["startTime"]))
        let end = times.local(Lenient.text(item["endTime"]))
        if let text = Lenient.text(item["startTime"]), start == nil {
            found("/startTime", .changed, "\"\(text)\" is not a time the apps read; the activity has no start date")
        }
        switch frequency {
        case .oneTime:
            if let start {
                // Opened when the study launched at the source: it keeps that moment here, so the
                // run the apps hold is the same run.
                schedule.startDate = start.date
                schedule.time = start.time
                if Lenient.flag(item["isLaunchStudy"]) == true {
                    found("/isLaunchStudy", .note, "opened when the study launched at the source; it opens at that moment (\(start.date) \(start.time)) here too")
                }
            } else {
                schedule.launchWithStudy = true
            }
            if end == nil || Lenient.flag(item["isStudyLifeTime"]) == true {
                schedule.studyLifetime = true
            } else {
                schedule.endDate = end?.date
                endsAtLastSecond(end)
            }
            if schedule.launchWithStudy == true, schedule.studyLifetime != true, schedule.endDate == nil {
                schedule.studyLifetime = true
            }
        case .daily:
            schedule.startDate = start?.date
            schedule.endDate = end?.date
            endsAtLastSecond(end)
            schedule.dailyTimes = dailyTimes(item)
        case .weekly, .monthly:
            schedule.startDate = start?.date
            schedule.time = start?.time
            if let count = repeatCount(frequency, from: Lenient.text(item["startTime"]), to: Lenient.text(item["endTime"])) {
                // An end one second before a run would start: the schedule repeats a number of times.
                schedule.repeatCount = count
            } else {
                schedule.endDate = end?.date
                if let end, let start, end.time != start.time {
                    found("/endTime", .changed, "a \(frequency.wireName.lowercased()) activity ends at its own time of day here (\(start.time)), not at \(end.time)")
                }
            }
        case .manual:
            schedule.runs = Lenient.items(item["frequency"]?["runs"]).enumerated().compactMap { index, run in
                guard let from = times.local(Lenient.text(run["startTime"])), let to = times.local(Lenient.text(run["endTime"])) else {
                    found("/frequency/runs/\(index)", .notImported, "a run needs a start and an end the apps read")
                    return nil
                }
                return ScheduledRun(start: "\(from.date)T\(from.time)", end: "\(to.date)T\(to.time)")
            }
        case .ongoing:
            if start != nil || end != nil {
                found("/startTime", .changed, "an ongoing activity is open from the study's launch here, with no end; the source's dates are not kept")
            }
        }
        return schedule
    }

    /// The number of weeks or months a schedule repeats when its end is one second before the
    /// run after its last would start (how StudyStack serves a repeat count); nil otherwise.
    private func repeatCount(_ frequency: Schedule.Frequency, from start: String?, to end: String?) -> Int? {
        guard let start = start.flatMap(WireInstants.instant), let end = end.flatMap(WireInstants.instant),
            let first = WallClock(start, in: times.zone), let after = WallClock(end.addingTimeInterval(1), in: times.zone),
            after.seconds == first.seconds, after.day > first.day
        else { return nil }
        let count: Int?
        switch frequency {
        case .weekly: count = (after.day - first.day) % 7 == 0 ? (after.day - first.day) / 7 : nil
        case .monthly:
            let (startYear, startMonth, _) = GregorianDays.civil(days: first.day)
            let (endYear, endMonth, _) = GregorianDays.civil(days: after.day)
            let months = (endYear - startYear) * 12 + endMonth - startMonth
            count = months > 0 && first.addingMonths(months) == after ? months : nil
        default: count = nil
        }
        return count.flatMap { DocumentBounds.repeatCount.contains($0) ? $0 : nil }
    }

    /// Ends here are the last second of the end date, as the apps were always sent them.
    private mutating func endsAtLastSecond(_ end: (date: String, time: String)?) {
        if let end, end.time != "23:59:59" {
            found("/endTime", .changed, "the activity ends at the end of \(end.date) here (23:59:59), not at \(end.time)")
        }
    }

    /// A daily schedule's times of day: each window's start. Here a window lasts until the next
    /// starts (the last until the end of the day); other ends are reported.
    private mutating func dailyTimes(_ item: JSONValue) -> [String] {
        let runs = Lenient.items(item["frequency"]?["runs"])
        var starts: [Int] = []
        for (index, run) in runs.enumerated() {
            guard let text = Lenient.text(run["startTime"]), let start = LocalTimes.time(text) else {
                found("/frequency/runs/\(index)/startTime", .notImported, "a daily window needs a start time (HH:mm:ss)")
                continue
            }
            starts.append(start)
        }
        let ordered = starts.sorted()
        for (index, run) in runs.enumerated() {
            guard let start = Lenient.text(run["startTime"]).flatMap(LocalTimes.time),
                let end = Lenient.text(run["endTime"]).flatMap(LocalTimes.time),
                let position = ordered.firstIndex(of: start)
            else { continue }
            let expected = position + 1 < ordered.count ? ordered[position + 1] - 1 : 86_399
            if end != expected {
                found("/frequency/runs/\(index)/endTime", .changed, "a daily window lasts until the next one starts here (\(WireInstants.clock(expected))), not until \(WireInstants.clock(end))")
            }
        }
        return ordered.map(WireInstants.clock)
    }

    // MARK: - Relative to an anchor date

    private mutating func anchor(_ value: JSONValue?) -> Anchor? {
        let source = Lenient.text(value?["sourceType"]) ?? ""
        switch source {
        case "EnrollmentDate":
            return Anchor(source: .enrollmentDate)
        case "ActivityResponse":
            guard let activityId = Lenient.text(value?["sourceActivityId"]), let key = Lenient.text(value?["sourceKey"]) else {
                found("/anchorDate", .notImported, "an anchor on an answer needs the activity and the question it is read from")
                return nil
            }
            return Anchor(source: .activityResponse, activityId: activityId, key: key, formKey: Lenient.text(value?["sourceFormKey"]))
        case "ParticipantProperty":
            guard let property = Lenient.text(value?["propertyMetadata"]?["propertyId"]) ?? Lenient.text(value?["sourceKey"]) else {
                found("/anchorDate/propertyMetadata", .notImported, "an anchor on a participant property needs the property's id")
                return nil
            }
            return Anchor(source: .participantProperty, propertyKey: property)
        default:
            found("/anchorDate/sourceType", .notImported, "\"\(source)\" is not an anchor date the apps know")
            return nil
        }
    }

    private mutating func relative(_ item: JSONValue, frequency: Schedule.Frequency, anchor: Anchor) -> Schedule {
        var schedule = Schedule(frequency: frequency, anchor: anchor)
        let start = item["anchorDate"]?["start"]
        let end = item["anchorDate"]?["end"]
        let days = DocumentBounds.anchorDays
        func clock(_ value: JSONValue?) -> String? {
            Lenient.text(value).flatMap(LocalTimes.time).map(WireInstants.clock)
        }
        switch frequency {
        case .oneTime, .daily, .weekly, .monthly:
            schedule.startDays = Lenient.integer(start?["anchorDays"], in: days) ?? 0
            schedule.endDays = Lenient.integer(end?["anchorDays"], in: days)
            if let count = Lenient.integer(end?["repeatInterval"], in: DocumentBounds.repeatCount), frequency != .oneTime {
                schedule.repeatCount = count
            }
            if frequency == .daily {
                schedule.dailyTimes = dailyTimes(item)
                if schedule.dailyTimes?.isEmpty ?? true { schedule.dailyTimes = clock(start?["time"]).map { [$0] } }
            } else {
                schedule.time = clock(start?["time"])
            }
            if frequency == .weekly, let weekday = Lenient.integer(start?["dayOfWeek"], in: 1...7) { schedule.dayOfWeek = weekday }
            if frequency == .monthly, let date = Lenient.integer(start?["dateOfMonth"], in: 1...31) { schedule.dateOfMonth = date }
        case .manual:
            schedule.anchorRuns = Lenient.items(item["frequency"]?["anchorRuns"]).enumerated().compactMap { index, run in
                guard let from = Lenient.integer(run["startDays"], in: days), let to = Lenient.integer(run["endDays"], in: days) else {
                    found("/frequency/anchorRuns/\(index)", .notImported, "a run needs its days from the anchor")
                    return nil
                }
                return AnchorRun(startDays: from, endDays: to, time: clock(run["time"]))
            }
        case .ongoing:
            schedule.startDays = Lenient.integer(start?["anchorDays"], in: days)
        }
        return schedule
    }
}
