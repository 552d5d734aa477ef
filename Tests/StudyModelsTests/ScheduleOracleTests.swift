import Foundation
import StudyModels
import Testing
import TestSupport

/// `ScheduleEngine` against an expansion written apart from it in Python (`datetime` and
/// `zoneinfo`, `Tests/Fixtures/schedules/oracle.py`), over random schedules of every frequency,
/// absolute and anchor-relative, random study and participant zones, enrolment instants and apps.
@Suite struct ScheduleOracleTests {
    static let zones = [
        "Australia/Melbourne", "Australia/Lord_Howe", "America/St_Johns", "Pacific/Apia", "Europe/London",
        "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/Sao_Paulo", "UTC",
    ]

    struct Case: Encodable {
        var studyZone: String
        var participantZone: String
        var joined: Int64
        var launched: Int64?
        var horizon: Int64
        var platform: String
        var anchorDay: String?
        var schedule: Schedule
    }

    /// A schedule drawn from every shape the document checks accept.
    struct Draw {
        var random: SplitMix64
        mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        mutating func between(_ low: Int, _ high: Int) -> Int { low + below(high - low + 1) }
        mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }
        mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }

        static func text(day: Int) -> String {
            let (year, month, dayOfMonth) = GregorianDays.civil(days: day)
            return String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
        }

        mutating func clock() -> String {
            // Times near the small hours, where the clocks change, half the time.
            chance(2) ? String(format: "%02d:%02d", between(0, 3), pick([0, 15, 30, 45, 59]))
                : String(format: "%02d:%02d", between(0, 23), between(0, 59))
        }

        mutating func schedule(startDay: Int) -> (Schedule, anchored: Bool) {
            let frequency = pick(Schedule.Frequency.allCases)
            var schedule = Schedule(frequency: frequency)
            if chance(3) {
                schedule.anchor = chance(2) ? Anchor(source: .enrollmentDate) : Anchor(source: .activityResponse, activityId: "a", key: "k")
                schedule.startDays = between(-5, 20)
                switch frequency {
                case .oneTime:
                    if chance(4) == false { schedule.endDays = schedule.startDays! + between(0, 40) }
                    schedule.time = chance(2) ? clock() : nil
                case .daily, .weekly, .monthly:
                    if chance(2) { schedule.repeatCount = between(1, 20) } else { schedule.endDays = schedule.startDays! + between(0, 120) }
                    if frequency == .daily {
                        schedule.dailyTimes = dailyTimes()
                        schedule.expiresAfterMilliseconds = timeout()
                    } else {
                        schedule.time = clock()
                    }
                case .manual:
                    schedule.startDays = nil
                    schedule.anchorRuns = (0..<between(1, 5)).map { _ in
                        let start = between(-5, 60)
                        return AnchorRun(startDays: start, endDays: start + between(0, 6), time: chance(2) ? clock() : nil)
                    }
                case .ongoing:
                    break
                }
                return (schedule, true)
            }
            let start = Self.text(day: startDay)
            switch frequency {
            case .oneTime:
                if chance(5) { schedule.launchWithStudy = true } else { schedule.startDate = start }
                if chance(5) { schedule.studyLifetime = true } else { schedule.endDate = Self.text(day: startDay + between(0, 60)) }
                schedule.time = chance(2) ? clock() : nil
            case .daily:
                schedule.startDate = start
                schedule.endDate = Self.text(day: startDay + between(0, 120))
                schedule.dailyTimes = dailyTimes()
                schedule.expiresAfterMilliseconds = timeout()
            case .weekly, .monthly:
                schedule.startDate = start
                schedule.time = clock()
                if chance(2) { schedule.repeatCount = between(1, 30) } else { schedule.endDate = Self.text(day: startDay + between(0, 400)) }
            case .manual:
                schedule.runs = (0..<between(1, 6)).map { _ in
                    let day = startDay + between(0, 90)
                    let end = day + between(0, 5)
                    return ScheduledRun(start: "\(Self.text(day: day))T\(clock())", end: "\(Self.text(day: end))T\(end == day ? "23:59" : clock())")
                }
            case .ongoing:
                break
            }
            return (schedule, false)
        }

        /// A timeout on one daily schedule in four: minutes to a day and more, or odd milliseconds.
        mutating func timeout() -> Int? {
            guard chance(4) else { return nil }
            return chance(2) ? between(1, 1_500) * 60_000 : between(1, 200_000_000)
        }

        mutating func dailyTimes() -> [String] {
            let minutes = Set((0..<between(1, 4)).map { _ in chance(2) ? between(0, 4 * 60) : between(0, 1_439) }).sorted()
            return minutes.map { String(format: "%02d:%02d", $0 / 60, $0 % 60) }
        }
    }

    /// 2,000 random schedules; every run (id, start, end) of each must be the oracle's.
    @Test func agreesWithAnIndependentExpansion() throws {
        var draw = Draw(random: SplitMix64(seed: 38_2026_1128))
        var cases: [Case] = []
        var engines: [(ScheduleEngine, StudyActivity, ParticipantClock, Int?, Date)] = []
        // Start days from 2009 to 2032, Samoa's 2011 change among them.
        let firstDay = GregorianDays.days(year: 2009, month: 1, day: 1), lastDay = GregorianDays.days(year: 2032, month: 1, day: 1)
        for index in 0..<2_000 {
            let studyZone = draw.pick(Self.zones)
            let participantZone = draw.chance(2) ? studyZone : draw.pick(Self.zones)
            let startDay = index % 10 == 0 ? GregorianDays.days(year: 2011, month: 12, day: 1) + draw.between(0, 40) : draw.between(firstDay, lastDay)
            let (schedule, anchored) = draw.schedule(startDay: startDay)
            let launched = draw.chance(6) ? nil : Int64(startDay - draw.between(0, 30)) * 86_400 + Int64(draw.between(0, 86_399))
            let joined = Int64(startDay + draw.between(-30, 90)) * 86_400 + Int64(draw.between(0, 86_399))
            let horizon = joined + 86_400 * Int64(draw.between(1, 500))
            let platform: Platform = draw.chance(2) ? .ios : .android
            let anchorDay = anchored && schedule.anchor?.source == .activityResponse ? startDay + draw.between(-10, 10) : nil
            cases.append(Case(
                studyZone: studyZone, participantZone: participantZone, joined: joined, launched: launched, horizon: horizon,
                platform: platform.rawValue, anchorDay: anchorDay.map(Draw.text(day:)), schedule: schedule))
            let engine = ScheduleEngine(
                studyZone: try #require(TimeZone(identifier: studyZone)),
                launchedAt: launched.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            let activity = StudyActivity(activityId: "A\(index)", title: LocalizedText("A"), schedule: schedule, steps: [])
            let participant = ParticipantClock(
                zone: try #require(TimeZone(identifier: participantZone)), joinedAt: Date(timeIntervalSince1970: TimeInterval(joined)),
                platform: platform)
            engines.append((engine, activity, participant, anchorDay, Date(timeIntervalSince1970: TimeInterval(horizon))))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let input = try cases.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n")
        let oracle = Conformance.root.appendingPathComponent("schedules/oracle.py").path
        let answers = try ExternalTool.run("python3", [oracle], input: Data(input.utf8)).split(separator: "\n")
        try #require(answers.count == cases.count)

        var disagreements: [String] = []
        var runCount = 0, timedOut = 0, frequencies: Set<String> = []
        for ((engine, activity, participant, anchorDay, horizon), answer) in zip(engines, answers) {
            let runs = engine.runs(of: activity, for: participant, anchorDay: anchorDay, before: horizon)
            runCount += runs.count
            if !runs.isEmpty { frequencies.insert(activity.schedule.frequency.rawValue + (activity.schedule.anchor == nil ? "" : "@anchor")) }
            if activity.schedule.expiresAfterMilliseconds != nil { timedOut += runs.count }
            let mine = "[" + runs.map { run in
                "[\(run.runId), \(Int64(run.start.timeIntervalSince1970)), \(run.end.map { String(Int64($0.timeIntervalSince1970)) } ?? "null")]"
            }.joined(separator: ", ") + "]"
            if mine != answer {
                disagreements.append("\(activity.activityId) \(participant.platform) \(participant.zone.identifier): engine \(mine.prefix(300)), oracle \(answer.prefix(300))")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(cases.count): \(disagreements.prefix(3))")
        // The draw reaches every frequency, absolute and relative, and many runs.
        #expect(frequencies.count == 12, "\(frequencies.sorted())")
        #expect(runCount > 30_000, "\(runCount) runs")
        // Daily windows cut short by a timeout among them.
        #expect(timedOut > 1_000, "\(timedOut) runs of daily schedules with a timeout")
    }
}
