import Foundation
import StudyModels

/// `schedule-bench PARTICIPANTS`: expands one year of runs for PARTICIPANTS participants across two
/// activities of a Melbourne study (a daily one with windows at 08:00 and 20:00, and a weekly one
/// anchored to enrolment at 09:00), on every core, and prints one line of JSON: participants,
/// runs, seconds, and per second. The participants' enrolments, zones and apps are drawn from a
/// fixed seed, the same every run; `make bench` runs the same expansion in PostgreSQL beside it
/// (bench/schedule-expansion.sql).
@main
enum ScheduleBench {
    static let zones = ["Australia/Melbourne", "Australia/Melbourne", "Australia/Melbourne", "Australia/Brisbane", "Australia/Perth",
                        "Australia/Lord_Howe", "Pacific/Auckland", "Europe/London"]

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 2, let count = Int(arguments[1]), (1...10_000_000).contains(count) else {
            FileHandle.standardError.write(Data("usage: schedule-bench PARTICIPANTS (1 to 10,000,000)\n".utf8))
            exit(64)
        }
        var daily = Schedule(frequency: .daily)
        (daily.startDate, daily.endDate, daily.dailyTimes) = ("2026-01-01", "2027-12-31", ["08:00", "20:00"])
        var weekly = Schedule(frequency: .weekly, anchor: Anchor(source: .enrollmentDate))
        (weekly.startDays, weekly.repeatCount, weekly.time) = (0, 52, "09:00")
        let activities = [
            StudyActivity(activityId: "daily", title: "Daily", schedule: daily, steps: []),
            StudyActivity(activityId: "weekly", title: "Weekly", schedule: weekly, steps: []),
        ]
        guard let melbourne = TimeZone(identifier: "Australia/Melbourne") else { exit(70) }
        let engine = ScheduleEngine(studyZone: melbourne, launchedAt: nil)
        // Enrolments through 2026, drawn once, before the clock starts.
        var random = SplitMix64(seed: 2026)
        let year2026 = 1_767_225_600.0  // 2026-01-01T00:00:00Z
        let participants: [ParticipantClock] = (0..<count).map { index in
            let zone = TimeZone(identifier: zones[Int(random.next() % UInt64(zones.count))]) ?? melbourne
            let joined = Date(timeIntervalSince1970: year2026 + random.nextUnit() * 365 * 86_400)
            return ParticipantClock(zone: zone, joinedAt: joined, platform: index % 3 == 0 ? .android : .ios)
        }
        // Each zone's offsets are read once, before the clock starts, as a server reads them once.
        for zone in Set(zones) { _ = ZoneOffsets.of(TimeZone(identifier: zone) ?? melbourne) }

        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let clock = ContinuousClock()
        let start = clock.now
        let runs = await withTaskGroup(of: Int.self) { group in
            for core in 0..<cores {
                group.addTask {
                    var total = 0
                    for index in stride(from: core, to: participants.count, by: cores) {
                        let participant = participants[index]
                        let horizon = participant.joinedAt.addingTimeInterval(365 * 86_400)
                        for activity in activities {
                            total += engine.runs(of: activity, for: participant, before: horizon).count
                        }
                    }
                    return total
                }
            }
            var sum = 0
            for await part in group { sum += part }
            return sum
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("{\"participants\": \(count), \"runs\": \(runs), \"cores\": \(cores), \"seconds\": \(seconds), "
            + "\"runsPerSecond\": \(Int(Double(runs) / seconds)), \"participantsPerSecond\": \(Int(Double(count) / seconds))}")
    }
}
