import Foundation
import StudyModels
import Testing
import TestSupport

/// A participant's schema tasks, computed on the server: the generator's own check values, the
/// schema demo protocol's plan for two seeds in Melbourne across the end of daylight saving, what
/// is due when, and wall-clock times that fall in a daylight-saving gap or happen twice.
@Suite struct SchemaTaskPlanTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    static func demo() throws -> JSONValue {
        let check = SchemaProtocolCheck.check(text: try Data(contentsOf: Conformance.root.appendingPathComponent("schema/demo_protocol.json")))
        return try #require(check.normalized)
    }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)!
    }

    /// `2024-04-05T08:42+11:00`: the local time a participant in Melbourne sees.
    static func local(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = melbourne
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mmxxx"
        return formatter.string(from: date)
    }

    @Test func splitMix64GivesItsPublishedValues() {
        var stream = SplitMix64(seed: 0)
        #expect(stream.next() == 0xE220_A839_7B1D_CDAF)
        #expect(stream.next() == 0x6E78_9E6A_A1B9_65F4)
        var three = SplitMix64(seed: 3)
        #expect(three.nextUnit() == 0.11345034205715454)
    }

    @Test func seed3DrawsControlAndTheseTimesAcrossTheEndOfDaylightSaving() throws {
        let plan = SchemaTaskPlan.make(
            protocol: try Self.demo(), seed: 3, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne)
        #expect(plan.condition == "Control")
        let expected = [
            (101, "2024-04-05T08:42+11:00"),
            (102, "2024-04-06T09:36+11:00"), (103, "2024-04-06T12:04+11:00"), (104, "2024-04-06T15:12+11:00"), (105, "2024-04-06T18:38+11:00"),
            (106, "2024-04-07T09:08+10:00"), (107, "2024-04-07T12:53+10:00"), (108, "2024-04-07T15:29+10:00"), (109, "2024-04-07T18:53+10:00"),
            (110, "2024-04-08T09:41+10:00"), (111, "2024-04-08T12:42+10:00"), (112, "2024-04-08T15:28+10:00"), (113, "2024-04-08T18:20+10:00"),
            (114, "2024-04-09T09:43+10:00"), (115, "2024-04-09T12:47+10:00"), (116, "2024-04-09T15:18+10:00"), (117, "2024-04-09T18:06+10:00"),
            (118, "2024-04-10T09:10+10:00"), (119, "2024-04-10T12:35+10:00"), (120, "2024-04-10T15:49+10:00"), (121, "2024-04-10T18:56+10:00"),
        ]
        try #require(plan.tasks.count == expected.count)
        for (task, (id, time)) in zip(plan.tasks, expected) {
            #expect(task.taskId == id && Self.local(task.time) == time, "\(task.taskId) \(Self.local(task.time))")
        }
        #expect(plan.tasks[0].moduleName == "Welcome" && plan.tasks[0].sticky && !plan.tasks[0].hidden)
        #expect(plan.tasks.dropFirst().allSatisfy { $0.moduleName == "Elements" && $0.moduleIndex == 1 && $0.expiresAfterMilliseconds == 30 && !$0.hidden })

        // Due at enrolment: the sticky welcome. At 09:40 the next day, still only that: task 102
        // opened at 09:36 and expired 30 ms later.
        #expect(plan.due(at: Self.date("2024-04-05T15:00:00+11:00"), completed: []).map(\.taskId) == [101])
        #expect(plan.due(at: Self.date("2024-04-06T09:40:00+11:00"), completed: []).map(\.taskId) == [101])
        // The same participant, planned again (a restart, another replica): the same plan.
        #expect(SchemaTaskPlan.make(
            protocol: try Self.demo(), seed: 3, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne) == plan)
    }

    /// The plan's tasks as runs: the sticky welcome once, each Elements task open for its 30 ms
    /// timeout, under the modules' activity ids.
    @Test func aPlansTasksAreRunsNumberedByTaskId() throws {
        let document = try Self.demo()
        let plan = SchemaTaskPlan.make(protocol: document, seed: 3, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne)
        let ids = SchemaImport.activityIds(modules: document["modules"]?.array ?? [])
        let runs = ScheduleEngine.runs(of: plan, activityIds: ids)
        try #require(runs.count == 21)
        #expect(runs.map(\.runId) == Array(101...121))
        #expect(runs[0].activityId == ids[0] && runs[0].end == nil)
        #expect(runs.dropFirst().allSatisfy { $0.activityId == ids[1] && $0.end == $0.start.addingTimeInterval(0.03) })
        #expect(ScheduleEngine.runs(of: plan, activityIds: []).isEmpty, "a task of a module without an id is no run")
    }

    @Test func seed42DrawsTreatmentWithTwentyElementsTasks() throws {
        let plan = SchemaTaskPlan.make(
            protocol: try Self.demo(), seed: 42, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne)
        #expect(plan.condition == "Treatment")
        try #require(plan.tasks.count == 20)
        #expect(plan.tasks.map(\.taskId).sorted() == Array(101...120))
        #expect(Self.local(plan.tasks[0].time) == "2024-04-06T09:09+11:00")
        // An assigned condition replaces the draw: the one drawn gives the same plan, the other
        // one its own modules.
        func assigned(_ condition: String) throws -> SchemaTaskPlan {
            SchemaTaskPlan.make(
                protocol: try Self.demo(), seed: 42, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne,
                condition: condition)
        }
        #expect(try assigned("Treatment") == plan)
        let control = try assigned("Control")
        #expect(control.condition == "Control" && control.tasks.count == 21 && control.tasks[0].moduleName == "Welcome")
    }

    @Test func aTimeInTheSpringGapMovesForwardAndARepeatedTimeTakesTheEarlier() {
        let inline: JSONValue = .object([
            "properties": .object(["study_id": .string("DST"), "conditions": .array([])]),
            "modules": .array([
                .object([
                    "name": .string("Night"), "condition": .string("*"),
                    "alerts": .object([
                        "start_offset": .number(0), "duration": .number(3), "random": .bool(false),
                        "times": .array([.object(["hours": .number(2), "minutes": .number(30)])]),
                    ]),
                ])
            ]),
        ])
        let spring = SchemaTaskPlan.make(protocol: inline, seed: 1, enrolledAt: Self.date("2024-10-05T12:00:00+10:00"), zone: Self.melbourne)
        #expect(spring.tasks.map { Self.local($0.time) } == ["2024-10-05T02:30+10:00", "2024-10-06T03:30+11:00", "2024-10-07T02:30+11:00"])
        let autumn = SchemaTaskPlan.make(protocol: inline, seed: 1, enrolledAt: Self.date("2024-04-06T12:00:00+11:00"), zone: Self.melbourne)
        #expect(autumn.tasks.map { Self.local($0.time) } == ["2024-04-06T02:30+11:00", "2024-04-07T02:30+11:00", "2024-04-08T02:30+10:00"])
        #expect(spring.condition == nil)
    }

    @Test func aModuleUnlocksOnlyAfterTheModuleItNamesIsDone() throws {
        var document = try Self.demo()
        // Elements waits for Welcome.
        let welcome = try #require(document["modules"].flatMap { if case .array(let m) = $0 { m[0]["uuid"]?.text } else { nil } })
        try document.set(.array([.string(welcome)]), at: JSONPointer("/modules/1/unlock_after")!)
        try document.set(.bool(false), at: JSONPointer("/modules/1/alerts/timeout")!)
        let plan = SchemaTaskPlan.make(protocol: document, seed: 3, enrolledAt: Self.date("2024-04-05T15:00:00+11:00"), zone: Self.melbourne)
        let later = Self.date("2024-04-06T13:00:00+11:00")
        #expect(plan.due(at: later, completed: []).map(\.taskId) == [101])
        #expect(plan.due(at: later, completed: [101]).map(\.taskId).sorted() == [101, 102, 103])
        #expect(plan.due(at: later, completed: [101, 102]).map(\.taskId).sorted() == [101, 103])
    }
}
