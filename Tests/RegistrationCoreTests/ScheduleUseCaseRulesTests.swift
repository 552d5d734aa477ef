import Foundation
import InMemoryPorts
import Logging
import RegistrationCore
import StudyModels
import Testing

/// Registration's schedule use cases (`ParticipantRuns`, `RunLedgerSweep`, `RunReminders`)
/// against in-memory participants, ledgers, reminders and study-metadata answers: what each
/// decides, and that a study-metadata that does not answer leaves the work for later.
@Suite struct ScheduleUseCaseRulesTests {
    static let logger = Logger(label: "test")
    static let userId = UUID()
    static let participantId = UUID()

    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// SLEEP: a daily diary at 08:00 UTC from 1 to 10 March 2026, reminded of after 90 minutes,
    /// never between 21:00 and 07:00.
    static func schedule(reminder: ActivityReminder? = ActivityReminder(afterMinutes: 90, quietFrom: "21:00", quietUntil: "07:00"))
        -> StudySchedule
    {
        var daily = Schedule(frequency: .daily)
        (daily.startDate, daily.endDate, daily.dailyTimes) = ("2026-03-01", "2026-03-10", ["08:00"])
        var activity = StudyActivity(activityId: "diary", title: "Sleep diary", schedule: daily, steps: [])
        activity.reminder = reminder
        return StudySchedule(studyId: "SLEEP", version: 2, timeZone: "UTC", launchedAt: utc("2026-02-20T00:00:00Z"), activities: [activity])
    }

    /// One participant, enrolled on 1 March, whose response for run 1 arrived.
    static func history(withdrawnAt: Date? = nil) -> InMemoryParticipantHistory {
        var part = InMemoryParticipantHistory.Part(
            studyId: "SLEEP", participantId: participantId,
            participant: .init(
                userId: userId, enrolledAt: utc("2026-03-01T00:00:00Z"), withdrawnAt: withdrawnAt, deviceOS: "ios",
                appTokenSHA256: "token-hash"))
        part.arrivals = [
            ResponseArrival(
                activityId: "diary", runId: 1, receivedAt: utc("2026-03-01T09:00:00Z"), finishedAt: utc("2026-03-01T08:55:00Z"),
                offsetMinutes: 0)
        ]
        return InMemoryParticipantHistory([part])
    }

    // MARK: ParticipantRuns

    @Test func aParticipantsRunsAreTheirScheduleAgainstWhatArrived() async throws {
        let runs = ParticipantRuns(store: Self.history(), studies: InMemoryStudySchedules([Self.schedule()]))
        let reply = try await runs.runs(
            studyId: "SLEEP", participantId: Self.participantId, from: Self.utc("2026-03-01T00:00:00Z"),
            to: Self.utc("2026-03-04T00:00:00Z"), now: Self.utc("2026-03-03T12:00:00Z"), logger: Self.logger)
        try #require(reply.runs.count == 3)
        #expect(reply.runs.map(\.runId) == [1, 2, 3])
        #expect(reply.runs.map(\.state) == ["completed", "missed", "due"])
        #expect(reply.runs[0].completedBy == ["response"])
        #expect(reply.runs[0].start == "2026-03-01T08:00:00+00:00")
    }

    @Test func eachThingThatCannotBeAnsweredIsItsOwnFailure() async throws {
        let window = (from: Self.utc("2026-03-01T00:00:00Z"), to: Self.utc("2026-03-04T00:00:00Z"), now: Self.utc("2026-03-03T12:00:00Z"))
        func failure(_ runs: ParticipantRuns, participant: UUID = Self.participantId) async -> RegistrationAdminError? {
            do {
                _ = try await runs.runs(
                    studyId: "SLEEP", participantId: participant, from: window.from, to: window.to, now: window.now, logger: Self.logger)
                return nil
            } catch {
                return error as? RegistrationAdminError
            }
        }
        let studies = InMemoryStudySchedules([Self.schedule()])
        let stranger = UUID()
        #expect(await failure(ParticipantRuns(store: Self.history(), studies: studies), participant: stranger)
            == .noParticipant(studyId: "SLEEP", participantId: stranger))
        #expect(await failure(ParticipantRuns(store: Self.history(), studies: InMemoryStudySchedules())) == .noPublishedStudy("SLEEP"))
        studies.stopAnswering("SLEEP")
        #expect(await failure(ParticipantRuns(store: Self.history(), studies: studies)) == .scheduleUnavailable)
    }

    // MARK: RunLedgerSweep

    @Test func aCountWritesTheStandingsAndTheDueRunsReminder() async throws {
        let ledgers = InMemoryRunLedgers(due: [.init(userId: Self.userId, studyId: "SLEEP")])
        let sweep = RunLedgerSweep(
            ledgers: ledgers, participants: Self.history(), studies: InMemoryStudySchedules([Self.schedule()]), logger: Self.logger)
        #expect(try await sweep.round(now: { Self.utc("2026-03-03T08:30:00Z") }) == 1)
        let written = ledgers.written
        try #require(written.count == 1)
        #expect(written[0].reminders["diary"] == .init(runId: 3, at: Self.utc("2026-03-03T09:30:00Z")))
        #expect(written[0].recountAt <= Self.utc("2026-03-04T08:30:00Z"), "counted again within a day at most")
        #expect(written[0].zone.zone.identifier == "GMT" || written[0].zone.zone.identifier == "UTC")
    }

    @Test func someoneWhoLeftIsCountedWithoutReminders() async throws {
        let ledgers = InMemoryRunLedgers(due: [.init(userId: Self.userId, studyId: "SLEEP")])
        let sweep = RunLedgerSweep(
            ledgers: ledgers, participants: Self.history(withdrawnAt: Self.utc("2026-03-02T00:00:00Z")),
            studies: InMemoryStudySchedules([Self.schedule()]), logger: Self.logger)
        _ = try await sweep.round(now: { Self.utc("2026-03-03T08:30:00Z") })
        try #require(ledgers.written.count == 1)
        #expect(ledgers.written[0].reminders.isEmpty)
    }

    @Test func aStudyMetadataThatDoesNotAnswerLeavesTheCountForLaterAndIsAskedOnceARound() async throws {
        let ledgers = InMemoryRunLedgers(due: [
            .init(userId: Self.userId, studyId: "SLEEP"), .init(userId: UUID(), studyId: "SLEEP"),
        ])
        let studies = InMemoryStudySchedules([Self.schedule()])
        studies.stopAnswering("SLEEP")
        let sweep = RunLedgerSweep(ledgers: ledgers, participants: Self.history(), studies: studies, logger: Self.logger)
        #expect(try await sweep.round(now: { Self.utc("2026-03-03T08:30:00Z") }) == 2)
        #expect(ledgers.written.isEmpty)
        #expect(studies.asked == ["SLEEP"])
        #expect(ledgers.wakes.isEmpty, "nothing was queued to deliver")
    }

    /// A count queues its weeks without waking their delivery; the round wakes it once, after all
    /// of its counts (RunLedgerStore.write).
    @Test func aRoundWakesTheDeliveriesOnceAfterItsCounts() async throws {
        let ledgers = InMemoryRunLedgers(due: Array(repeating: .init(userId: Self.userId, studyId: "SLEEP"), count: 3))
        let sweep = RunLedgerSweep(
            ledgers: ledgers, participants: Self.history(), studies: InMemoryStudySchedules([Self.schedule()]), logger: Self.logger)
        #expect(try await sweep.round(now: { Self.utc("2026-03-03T08:30:00Z") }) == 3)
        #expect(ledgers.written.count == 3)
        #expect(ledgers.wakes == [3])
    }

    // MARK: RunReminders

    static func due(runId: Int = 3, start: String = "2026-03-03T08:00:00Z") -> RunReminderStore.Due {
        RunReminderStore.Due(
            userId: userId, studyId: "SLEEP", activityId: "diary", runId: runId, plannedAt: utc("2026-03-03T09:30:00Z"),
            runStart: utc(start), runEnd: utc("2026-03-03T23:59:59Z"), timeZone: "UTC")
    }

    @Test func aDueReminderIsDecidedWithTheParticipantsDayTheRunsWeekAndTheStudysWords() async throws {
        let store = InMemoryDueReminders(due: [Self.due()])
        let reminders = RunReminders(store: store, studies: InMemoryStudySchedules([Self.schedule()]), logger: Self.logger)
        #expect(try await reminders.round(now: { Self.utc("2026-03-03T09:30:00Z") }) == 1)
        #expect(store.fates == [
            .decided(
                localDay: "2026-03-03", runWeek: "2026-03-02", maxPerDay: ActivityReminder(afterMinutes: 90).maxPerDay,
                title: "Sleep diary", message: "It is time for this activity.")
        ])
    }

    @Test func aReminderDueInQuietHoursWaitsForTheirEnd() async throws {
        let store = InMemoryDueReminders(due: [Self.due()])
        let reminders = RunReminders(store: store, studies: InMemoryStudySchedules([Self.schedule()]), logger: Self.logger)
        _ = try await reminders.round(now: { Self.utc("2026-03-03T22:00:00Z") })
        #expect(store.fates == [.postponed(until: Self.utc("2026-03-04T07:00:00Z"))])
    }

    @Test func aReminderTheStudyNoLongerSetsIsReleasedAndOneItCannotAskAboutWaits() async throws {
        let released = InMemoryDueReminders(due: [Self.due()])
        _ = try await RunReminders(store: released, studies: InMemoryStudySchedules([Self.schedule(reminder: nil)]), logger: Self.logger)
            .round(now: { Self.utc("2026-03-03T09:30:00Z") })
        #expect(released.fates == [.released])

        let waiting = InMemoryDueReminders(due: [Self.due(), Self.due(runId: 4, start: "2026-03-04T08:00:00Z")])
        let studies = InMemoryStudySchedules([Self.schedule()])
        studies.stopAnswering("SLEEP")
        #expect(try await RunReminders(store: waiting, studies: studies, logger: Self.logger)
            .round(now: { Self.utc("2026-03-03T09:30:00Z") }) == 2)
        #expect(waiting.fates.isEmpty, "decided when the lease ends and study-metadata answers")
        #expect(studies.asked == ["SLEEP"])
    }
}
