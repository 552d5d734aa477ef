import Foundation
import StudyModels
import Testing

/// What a draft says that participants would not get as the coordinator expects: warned of when
/// it is saved, never a reason to refuse it.
@Suite struct ContentWarningTests {
    func review(_ change: (inout StudyDocument) -> Void) throws -> (problems: [ValidationProblem], warnings: [ValidationProblem]) {
        var document = try StudyValidatorTests.example()
        change(&document)
        let review = StudyValidator.review(document)
        return (review.problems, review.warnings)
    }

    @Test func theExampleHasNoneOfThem() throws {
        let warnings = try review { _ in }.warnings
        #expect(!warnings.contains { $0.pointer.hasPrefix("/languages") || $0.pointer.hasSuffix("/branching") }, "\(warnings)")
    }

    /// The example's weekly activity (anchored to enrolment) given `dayOfWeek` 2, and its monthly
    /// follow-up (anchored to an answer) `dateOfMonth` 1: served, but no app schedules by them.
    @Test func aWeekdayOrDateOnAnAnchoredScheduleIsSaidToBeUnscheduled() throws {
        let (problems, warnings) = try review { document in
            document.activities[1].schedule.dayOfWeek = 2
            document.activities[3].schedule.dateOfMonth = 1
        }
        let unscheduled = warnings.filter { $0.pointer.hasSuffix("/dayOfWeek") || $0.pointer.hasSuffix("/dateOfMonth") }
        try #require(unscheduled.count == 2, "\(warnings)")
        #expect(unscheduled.map(\.pointer) == ["/activities/1/schedule/dayOfWeek", "/activities/3/schedule/dateOfMonth"])
        #expect(unscheduled[0].message.hasPrefix("the apps do not schedule by dayOfWeek"))
        #expect(!problems.contains { $0.pointer.hasSuffix("/dayOfWeek") || $0.pointer.hasSuffix("/dateOfMonth") })
        // Without them: no warning, and no problem either (they are optional).
        let (without, quiet) = try review { document in
            for index in document.activities.indices {
                document.activities[index].schedule.dayOfWeek = nil
                document.activities[index].schedule.dateOfMonth = nil
            }
        }
        #expect(!quiet.contains { $0.pointer.hasSuffix("/dayOfWeek") || $0.pointer.hasSuffix("/dateOfMonth") })
        #expect(!without.contains { $0.pointer.hasSuffix("/dayOfWeek") || $0.pointer.hasSuffix("/dateOfMonth") })
        // Out of range is still refused.
        let (refused, _) = try review { $0.activities[1].schedule.dayOfWeek = 8 }
        #expect(refused.contains { $0.pointer == "/activities/1/schedule/dayOfWeek" && $0.message == "the weekday must be 1 (Sunday) to 7 (Saturday)" })
    }

    @Test func aLanguageSwitchedOnWithNoTextInItIsNamed() throws {
        // The example is in English and Spanish; French is switched on with nothing written in it.
        let (problems, warnings) = try review { $0.languages.append("fr") }
        #expect(!problems.contains { $0.pointer.hasPrefix("/languages") })
        let french = warnings.filter { $0.pointer.hasPrefix("/languages") }
        try #require(french.count == 1, "\(warnings)")
        #expect(french[0].pointer == "/languages/2")
        #expect(french[0].message == "French is switched on, but no text has a French version yet: participants who read it are shown English")

        // One French text is enough to say the translation has begun.
        let begun = try review { document in
            document.languages.append("fr")
            document.name.translations["fr"] = "Bien dormir"
        }.warnings
        #expect(!begun.contains { $0.pointer.hasPrefix("/languages") })
        // Blank text is no translation.
        let blank = try review { document in
            document.languages.append("fr")
            document.name.translations["fr"] = "  "
        }.warnings
        #expect(blank.contains { $0.pointer == "/languages/2" })
    }

    @Test func branchTargetsOfAnActivityWhoseBranchingIsOffAreNamed() throws {
        // The example's daily check-in branches on its first answer.
        let off = try review { $0.activities[0].branching = false }.warnings
        let ignored = off.filter { $0.pointer == "/activities/0/branching" }
        try #require(ignored.count == 1, "\(off)")
        #expect(ignored[0].message.hasPrefix("branching is off, so the apps ignore the branch targets of step "))
        #expect(ignored[0].message.hasSuffix("; turn branching on, or remove them"))

        // Destinations that only say "the next step" (as imported designs often do) change nothing.
        let linear = try review { document in
            document.activities[0].branching = false
            let keys = document.activities[0].steps.map(\.key)
            for index in document.activities[0].steps.indices {
                let next = index + 1 < keys.count ? keys[index + 1] : ""
                document.activities[0].steps[index].destinations = [Destination(destination: next)]
            }
        }.warnings
        #expect(!linear.contains { $0.pointer == "/activities/0/branching" }, "\(linear)")
    }

    @Test func aScheduledNotificationWhoseTimeHasPassedWillNotBeSent() throws {
        var document = try StudyValidatorTests.example()
        document.timeZone = "America/New_York"
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-27T15:00:00Z"))  // 10:00 in New York
        func warnings(at: String) -> [ValidationProblem] {
            var changed = document
            changed.notifications = [StudyNotification(notificationId: "n", subtype: .announcement, text: LocalizedText("Hi"), timing: .scheduled, at: at)]
            return PublishGuard.warnings(changed, now: now)
        }
        #expect(warnings(at: "2026-11-27T09:00").map(\.pointer) == ["/notifications/0/at"])
        #expect(warnings(at: "2026-11-27T09:00").first?.message
            == "2026-11-27T09:00 has passed, so this notification will not be sent; give it a time to come, or remove it")
        #expect(warnings(at: "2020-01-01T09:00").count == 1)
        // Within the grace the dispatcher may still send it, and a time to come is fine.
        #expect(warnings(at: "2026-11-27T09:50").isEmpty)
        #expect(warnings(at: "2026-11-27T11:00").isEmpty)
        // Read in the study's zone: in UTC it is 15:00, so 14:00 is an hour gone.
        document.timeZone = "UTC"
        #expect(warnings(at: "2026-11-27T14:00").count == 1)
        #expect(warnings(at: "2026-11-27T14:50").isEmpty)
        // Other timings are not checked against the clock.
        var immediate = document
        immediate.notifications = [StudyNotification(notificationId: "n", subtype: .announcement, text: LocalizedText("Hi"), timing: .immediate)]
        #expect(PublishGuard.warnings(immediate, now: now).isEmpty)
    }
}
