import Foundation
import JSONText

/// A participant's tasks under a schema protocol, computed on the server the way the schema app
/// computes them on the phone at enrolment (docs/schema-protocols.md, Schedules): each module of
/// the participant's condition, for `duration` days from `start_offset`, at each of its `times`,
/// moved by up to `random_interval` minutes either way when `random`.
///
/// The app draws with `Math.random`, so no server can know the times a phone drew. The server's
/// plan is its own and reproducible: every draw comes from one SplitMix64 stream seeded per
/// participant, in a fixed order (one draw for the condition, always taken; then one per task of
/// a random module, in generation order), so the same participant gets the same plan after a
/// restart, on any replica.
public struct SchemaTaskPlan: Sendable, Equatable {
    public struct Task: Sendable, Equatable {
        /// 101, 102, ... in generation order (module, then day, then the order of `times`), as
        /// the app numbers them.
        public var taskId: Int
        /// The module's place in `modules`: what the app posts back as `module_index`.
        public var moduleIndex: Int
        public var moduleName: String
        public var moduleUUID: String?
        public var time: Date
        /// The minutes the random draw moved it by, from -interval to interval-1 (0 when not random).
        public var shift: Int
        public var sticky: Bool
        /// Only a sticky module's first task is listed; the app keeps the others hidden.
        public var hidden: Bool
        /// How long after `time` the task is offered, when the module times out (milliseconds).
        public var expiresAfterMilliseconds: Int?
        public var unlockAfter: [String]
    }

    /// The most tasks a plan holds: ten years of two dozen alerts a day, so a protocol's numbers
    /// bound the time and memory a plan takes whatever they say.
    public static let maxTasks = 100_000

    /// The condition the plan follows (nil when the study has none).
    public var condition: String?
    /// In time order (ties in task-id order).
    public var tasks: [Task]

    /// The plan of a participant enrolled at `enrolledAt` in `zone`. `condition`: the condition
    /// the server assigned (`SchemaConditions`); nil draws it from the stream, uniformly, as the
    /// app does. `document` is a checked protocol (`SchemaProtocolCheck.normalized`).
    public static func make(
        protocol document: JSONValue, seed: UInt64, enrolledAt: Date, zone: TimeZone, condition assigned: String? = nil
    ) -> SchemaTaskPlan {
        var stream = SplitMix64(seed: seed)
        let conditions = document["properties"]?["conditions"]?.stringArray ?? []
        // The condition's draw is always taken, so the stream after it is the same however the
        // condition was chosen.
        let draw = stream.nextUnit()
        let condition = assigned ?? (conditions.isEmpty ? nil : conditions[min(Int(draw * Double(conditions.count)), conditions.count - 1)])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let enrolmentDay = calendar.dateComponents([.year, .month, .day], from: enrolledAt)

        var tasks: [Task] = []
        var taskId = 101
        guard case .array(let modules)? = document["modules"] else { return SchemaTaskPlan(condition: condition, tasks: []) }
        for (index, module) in modules.enumerated() {
            // A module without a condition is scheduled only when none was drawn, as in the app.
            let moduleCondition = module["condition"]?.string
            guard moduleCondition == "*" || moduleCondition == condition, let alerts = module["alerts"] else { continue }
            let isRandom = alerts["random"] == .bool(true)
            // Bounded as the protocol check bounds them, also for a protocol stored before it did:
            // the days below are a loop, and every number here meets arithmetic.
            let days = DocumentBounds.anchorDays
            let interval = min(max(alerts["random_interval"]?.integer ?? 0, 0), SchemaProtocolCheck.longestRandomInterval)
            let sticky = alerts["sticky"] == .bool(true)
            let expires = alerts["timeout"] == .bool(true) ? alerts["timeout_after"]?.integer : nil
            let startOffset = min(max(alerts["start_offset"]?.integer ?? 0, days.lowerBound), days.upperBound)
            let duration = min(alerts["duration"]?.integer ?? 0, days.upperBound)
            let times: [(hours: Int, minutes: Int)] =
                (alerts["times"]?.array ?? []).compactMap { time in
                    guard let hours = time["hours"]?.integer, let minutes = time["minutes"]?.integer,
                        (0...23).contains(hours), (0...59).contains(minutes)
                    else { return nil }
                    return (hours, minutes)
                }
            var stickyCount = 0
            for day in 0..<max(duration, 0) where tasks.count < Self.maxTasks {
                for time in times where tasks.count < Self.maxTasks {
                    var shift = 0
                    if isRandom {
                        // One draw per task of a random module, even when the interval is 0.
                        shift = Int(stream.nextUnit() * Double(2 * interval)) - interval
                    }
                    var components = enrolmentDay
                    components.day = (components.day ?? 1) + startOffset + day
                    components.hour = time.hours
                    components.minute = time.minutes + shift
                    tasks.append(Task(
                        taskId: taskId, moduleIndex: index, moduleName: module["name"]?.string ?? "",
                        moduleUUID: module["uuid"]?.string, time: Self.instant(components, calendar: calendar), shift: shift,
                        sticky: sticky, hidden: sticky && stickyCount > 0, expiresAfterMilliseconds: expires,
                        unlockAfter: module["unlock_after"]?.stringArray ?? []))
                    taskId += 1
                    stickyCount += 1
                }
            }
        }
        tasks.sort { ($0.time, $0.taskId) < ($1.time, $1.taskId) }
        return SchemaTaskPlan(condition: condition, tasks: tasks)
    }

    /// The tasks a participant is offered at `now`, having completed `completed` (task ids), as
    /// the app lists them: started (strictly before `now`) and unlocked (each `unlock_after` uuid
    /// is a completed task's module); a sticky module's first task always; any other until it is
    /// completed or, when it times out, until it expires.
    public func due(at now: Date, completed: Set<Int>) -> [Task] {
        let completedModules = Set(tasks.filter { completed.contains($0.taskId) }.compactMap(\.moduleUUID))
        return tasks.filter { task in
            guard now > task.time, task.unlockAfter.allSatisfy(completedModules.contains) else { return false }
            if task.sticky { return !task.hidden }
            if completed.contains(task.taskId) { return false }
            guard let expires = task.expiresAfterMilliseconds else { return true }
            return now < task.time.addingTimeInterval(Double(expires) / 1000)
        }
    }

    /// The instant of a wall-clock time in the calendar's zone, as JavaScript's `Date` makes it:
    /// `ZoneTime`'s rule (a time in a spring-forward gap moves forward by the gap, 02:30 becoming
    /// 03:30; a time that happens twice takes the earlier).
    static func instant(_ components: DateComponents, calendar: Calendar) -> Date {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        // The wall clock read as if it were UTC (which also carries minutes and days past their
        // ends into the next hour or month, as the app's `Date` does).
        guard let wall = utc.date(from: components)?.timeIntervalSince1970.rounded(.down),
            wall.isFinite, abs(wall) <= Double(ZoneTime.range.upperBound),
            let resolved = ZoneTime.resolve(local: Int64(wall), in: calendar.timeZone)
        else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(resolved.instant))
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a small, fast generator whose whole state is one
/// number, so a participant's stream is reproducible from their seed alone.
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1) from the top 53 bits.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
