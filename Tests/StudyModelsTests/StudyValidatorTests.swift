import Foundation
import StudyModels
import Testing

/// Study documents: the documented example is valid, and every rule reports a JSON Pointer.
@Suite struct StudyValidatorTests {
    /// `docs/examples/complete-study.json`, the example of the researcher's guide.
    static func example() throws -> StudyDocument {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")
        return try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: url))
    }

    /// Validates `document` after `change` and returns the problems.
    func problems(_ change: (inout StudyDocument) -> Void) throws -> [ValidationProblem] {
        var document = try Self.example()
        change(&document)
        return StudyValidator.validate(document)
    }

    func expectProblem(
        _ problems: [ValidationProblem], at pointer: String, containing text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let match = problems.first { $0.pointer == pointer }
        #expect(match != nil, "no problem at \(pointer); got \(problems)", sourceLocation: sourceLocation)
        #expect(match?.message.contains(text) == true, "\(match?.message ?? "-")", sourceLocation: sourceLocation)
    }

    @Test func theDocumentedExampleIsValidAndCoversEverything() throws {
        let document = try Self.example()
        #expect(StudyValidator.validate(document) == [])
        let responseTypes = Set(document.activities.flatMap { activity in
            activity.steps.flatMap { [$0] + ($0.steps ?? []) }.compactMap(\.responseType)
        })
        #expect(responseTypes == Set(ResponseType.allCases))
        #expect(Set(document.activities.map(\.schedule.frequency)) == Set(Schedule.Frequency.allCases))
        let anchors = Set(document.activities.compactMap { $0.schedule.anchor?.source.rawValue })
        #expect(anchors == ["enrollmentDate", "activityResponse", "participantProperty"])
        #expect(document.activities.contains { $0.reminder?.quietFrom != nil && $0.reminder?.randomMinutes != nil })
    }

    /// WCP's basic information beside the listing: a full name, a support address, an estimated
    /// duration and data partners, each held to WCP's bounds; read back as written, the unit
    /// weeks when left out.
    @Test func theBasicRecordsAreReadAndHeldToTheirBounds() throws {
        let json = #"""
            {"studyId": "S", "appId": "A", "name": "Sleep", "timeZone": "UTC", "eligibility": {"type": "token"}, "consent": {},
             "fullName": "Sleep quality in shift workers: a twelve-week study", "supportEmail": "sleep@example.org",
             "estimatedDuration": {"value": 12}, "dataPartners": ["Example University", "Example Hospital"]}
            """#
        let read = try JSONDecoder().decode(StudyDocument.self, from: Data(json.utf8))
        #expect(read.estimatedDuration == StudyDuration(value: 12, unit: .weeks))
        #expect(read.dataPartners == ["Example University", "Example Hospital"])
        #expect(StudyValidator.validate(read).filter { !$0.pointer.hasPrefix("/consent") } == [], "the consent is not written yet")
        let again = try JSONDecoder().decode(StudyDocument.self, from: JSONEncoder().encode(read))
        #expect(again == read)
        // Left out, they stay out of the document written back.
        let plain = try JSONEncoder().encode(try Self.example())
        #expect(!String(decoding: plain, as: UTF8.self).contains("dataPartners"))

        let found = try problems { document in
            document.fullName = LocalizedText(String(repeating: "x", count: 151))
            document.supportEmail = "not an address"
            document.estimatedDuration = StudyDuration(value: 0, unit: .months)
            document.dataPartners = ["Example University", "", "two\nlines", "Example University"]
        }
        expectProblem(found, at: "/fullName/en", containing: "at most 150")
        expectProblem(found, at: "/supportEmail", containing: "e-mail address")
        expectProblem(found, at: "/estimatedDuration/value", containing: "1 to 999")
        expectProblem(found, at: "/dataPartners/1", containing: "one line")
        expectProblem(found, at: "/dataPartners/2", containing: "one line")
        expectProblem(found, at: "/dataPartners/3", containing: "more than once")
        let many = try problems { $0.dataPartners = (0...20).map { "Partner \($0)" } }
        expectProblem(many, at: "/dataPartners", containing: "at most 20")
        let longAddress = try problems { $0.supportEmail = String(repeating: "a", count: 90) + "@example.org" }
        expectProblem(longAddress, at: "/supportEmail", containing: "100")
    }

    @Test func aRemindersNumbersTimesAndTextAreHeldToTheirBounds() throws {
        let found = try problems { document in
            document.activities[0].reminder = ActivityReminder(
                afterMinutes: -1, randomMinutes: 721, quietFrom: "25:00", quietUntil: nil, maxPerDay: 0,
                message: LocalizedText(String(repeating: "x", count: 201)))
            document.activities[1].reminder = ActivityReminder(afterMinutes: 10_081, quietFrom: "22:00", quietUntil: "22:00")
        }
        expectProblem(found, at: "/activities/0/reminder/afterMinutes", containing: "0 to 10080")
        expectProblem(found, at: "/activities/0/reminder/randomMinutes", containing: "0 to 720")
        expectProblem(found, at: "/activities/0/reminder/maxPerDay", containing: "1 to 24")
        expectProblem(found, at: "/activities/0/reminder/quietFrom", containing: "hours and minutes")
        expectProblem(found, at: "/activities/0/reminder/quietUntil", containing: "both")
        expectProblem(found, at: "/activities/0/reminder/message/en", containing: "200")
        expectProblem(found, at: "/activities/1/reminder/afterMinutes", containing: "0 to 10080")
        expectProblem(found, at: "/activities/1/reminder/quietUntil", containing: "another time")
    }

    /// The tables the response service keeps for every study are no activity's, whatever the case.
    @Test func anActivityMayNotTakeTheNameOfATableEveryStudyHas() throws {
        let found = try problems { document in
            document.activities[0].activityId = "runadherence"
            document.activities[1].activityId = "ParticipantProperties"
        }
        expectProblem(found, at: "/activities/0/activityId", containing: "RunAdherence is a table")
        expectProblem(found, at: "/activities/1/activityId", containing: "ParticipantProperties is a table")
    }

    /// A scale whose lowest value is above its highest, with a default: the bounds' problem, and no
    /// trap from the range the default is checked against.
    @Test func aScaleWithReversedBoundsAndADefaultIsAProblem() throws {
        let found = try problems {
            guard case .scale(var scale)? = $0.activities[0].steps[1].format else { return }
            (scale.minValue, scale.maxValue, scale.default) = (10, 1, 5)
            $0.activities[0].steps[1].format = .scale(scale)
        }
        expectProblem(found, at: "/activities/0/steps/1/format/maxValue", containing: "greater than the lowest value")
        #expect(!found.contains { $0.pointer == "/activities/0/steps/1/format/default" }, "\(found)")
    }

    /// A date question's range and dates as the iOS app reads them: it force-unwraps the range it
    /// knows (any other ends it), and a date it cannot read is silently no bound at all.
    @Test func aDateQuestionsRangeAndDatesAreOnesTheAppsRead() throws {
        func dates(_ change: (inout DateFormat) -> Void) throws -> [ValidationProblem] {
            try problems {
                guard case .date(var format)? = $0.activities[2].steps[0].format else { Issue.record("no date question"); return }
                change(&format)
                $0.activities[2].steps[0].format = .date(format)
            }.filter { $0.pointer.hasPrefix("/activities/2/steps/0/format") }
        }
        let at = "/activities/2/steps/0/format"
        #expect(try dates { $0.dateRange = "custom"; $0.minDate = "2027-01-01T00:00:00.000-0500"; $0.maxDate = "2027-12-31T23:59:00.000-0500"; $0.default = "" } == [])
        #expect(try dates { $0.dateRange = ""; $0.minDate = ""; $0.maxDate = "" } == [], "the original servers' empty values")
        expectProblem(try dates { $0.dateRange = "today" }, at: "\(at)/dateRange", containing: "untilCurrent")
        // Compared by scalars: a look-alike with a zero-width space is no range the app knows.
        expectProblem(try dates { $0.dateRange = "custom\u{200B}" }, at: "\(at)/dateRange", containing: "custom")
        expectProblem(try dates { $0.minDate = "2027-01-01" }, at: "\(at)/minDate", containing: "as the apps read it")
        expectProblem(try dates { $0.maxDate = "2027-02-30T00:00:00.000+0000" }, at: "\(at)/maxDate", containing: "as the apps read it")
        expectProblem(
            try dates { $0.minDate = "2027-06-01T00:00:00.000+0000"; $0.maxDate = "2027-06-01T01:00:00.000+0100" },
            at: "\(at)/maxDate", containing: "later than the earliest")
        expectProblem(
            try dates { $0.minDate = "2027-06-01T00:00:00.000+0000"; $0.default = "2027-05-31T23:00:00.000+0000" },
            at: "\(at)/default", containing: "between the earliest and the latest")
    }

    /// Numbers past any study's: each is a problem at its pointer, before any arithmetic meets it.
    @Test func numbersPastAnyStudysAreProblems() throws {
        let repeats = try problems { $0.activities[4].schedule.repeatCount = Int.max }
        expectProblem(repeats, at: "/activities/4/schedule/repeatCount", containing: "1 to 1000")
        let days = try problems { $0.activities[1].schedule.startDays = Int.min }
        expectProblem(days, at: "/activities/1/schedule/startDays", containing: "-3660 to 3660 days")
        let expiry = try problems { $0.activities[0].schedule.expiresAfterMilliseconds = Int.max }
        expectProblem(expiry, at: "/activities/0/schedule/expiresAfterMilliseconds", containing: "at most a year")
        let kicks = try problems {
            guard case .fetalKickCounter(var task)? = $0.activities[8].steps[0].format else { return }
            task.kickCount = Int.max
            $0.activities[8].steps[0].format = .fetalKickCounter(task)
        }
        expectProblem(kicks, at: "/activities/8/steps/0/format/kickCount", containing: "1 to 10000")
        let notification = try problems { $0.notifications[2].anchorDays = 9_999_999 }
        expectProblem(notification, at: "/notifications/2/anchorDays", containing: "-3660 to 3660 days")
        // Within the bounds, nothing is said.
        #expect(try problems { $0.activities[4].schedule.repeatCount = 1_000 }.isEmpty)
    }

    /// What a study may hold in all (docs/security.md, Budgets): activities, steps in one
    /// activity, a daily activity's windows; and a daily time is a whole minute.
    @Test func countsPastAnyStudysAreProblems() throws {
        let daily = 0  // the example's daily activity
        #expect(try Self.example().activities[daily].schedule.frequency == .daily)
        let manyTimes = try problems {
            $0.activities[daily].schedule.dailyTimes = (0..<49).map { String(format: "%02d:%02d", $0 / 2 % 24, $0 % 2 * 30) }
        }
        expectProblem(manyTimes, at: "/activities/\(daily)/schedule/dailyTimes", containing: "at most 48 times a day")
        let seconds = try problems { $0.activities[daily].schedule.dailyTimes = ["08:00:30", "20:00:00"] }
        expectProblem(seconds, at: "/activities/\(daily)/schedule/dailyTimes/0", containing: "not a whole minute")
        #expect(!seconds.contains { $0.pointer == "/activities/\(daily)/schedule/dailyTimes/1" }, "HH:mm:00, as the apps write it, is a time")
        #expect(try problems {
            $0.activities[daily].schedule.dailyTimes = (0..<48).map { String(format: "%02d:%02d", $0 / 2, $0 % 2 * 30) }
        }.isEmpty, "48 times, one every half hour, are within the bound")

        let manySteps = try problems { document in
            let step = document.activities[0].steps[0]
            document.activities[0].steps = (0..<20_000).map { index in
                var copy = step
                copy.key = "q\(index)"
                copy.destinations = nil
                return copy
            }
        }
        expectProblem(manySteps, at: "/activities/0/steps", containing: "at most 2000 steps")
        #expect(manySteps.filter { $0.pointer.hasPrefix("/activities/0/steps/") }.isEmpty, "no step is checked one by one past the bound")

        let manyActivities = try problems { document in
            let activity = document.activities[0]
            document.activities = (0..<501).map { index in
                var copy = activity
                copy.activityId = "a\(index)"
                return copy
            }
            document.dashboard.statistics = []
            document.dashboard.charts = []
            document.notifications = []
        }
        expectProblem(manyActivities, at: "/activities", containing: "at most 500 activities")
    }

    /// The checks of an activity's steps are linear in its steps: each step's branching and
    /// visibility is one look-up, not a set of every key built for every step. At the bound, every
    /// step branching to the next and shown only after the one before, the activity is valid.
    @Test func anActivityAtItsStepBoundWithBranchingEverywhereIsValid() throws {
        let found = try problems { document in
            let step = document.activities[0].steps[0]
            let count = DocumentBounds.maxStepsPerActivity
            document.activities[0].steps = (0..<count).map { index in
                var copy = step
                copy.key = "q\(index)"
                copy.type = .instruction
                copy.format = nil
                copy.destinations = index + 1 < count ? [Destination(destination: "q\(index + 1)")] : nil
                return copy
            }
            document.dashboard.statistics = []
            document.dashboard.charts = []
        }
        #expect(found.isEmpty, "\(found.prefix(3))")
    }

    /// A spatial span whose shortest span is above its longest is refused.
    @Test func aSpatialSpanWithReversedSpansIsAProblem() throws {
        let found = try problems {
            $0.activities[8].steps[0].format = .spatialSpanMemory(SpatialSpanMemoryFormat(initialSpan: 3, minimumSpan: 5, maximumSpan: 2))
        }
        expectProblem(found, at: "/activities/8/steps/0/format/maximumSpan", containing: "at least the shortest span (5)")
    }

    /// Names and titles are one line: a study name with CR LF (which would have written headers of
    /// its own into every invitation's subject) is refused, in any language.
    @Test func namesAndTitlesHoldNoLineBreakOrControlCharacter() throws {
        let name = try problems { $0.name.translations["es"] = "Duerma\r\nBcc: everyone@example.org" }
        expectProblem(name, at: "/name/es", containing: "one line")
        let title = try problems { $0.activities[0].title.translations["en"] = "Daily\u{0007}" }
        expectProblem(title, at: "/activities/0/title/en", containing: "one line")
        let separator = try problems { $0.name.translations["en"] = "Sleep\u{2028}Well" }
        expectProblem(separator, at: "/name/en", containing: "one line")
    }

    @Test func theDocumentRoundTripsThroughJSON() throws {
        let document = try Self.example()
        let again = try JSONDecoder().decode(StudyDocument.self, from: JSONEncoder().encode(document))
        #expect(again == document)
    }

    @Test func duplicateStepKeys() throws {
        let found = try problems { $0.activities[0].steps[2].key = "sleepQuality" }
        expectProblem(found, at: "/activities/0/steps/2/key", containing: "duplicate step key \"sleepQuality\"")
        let inForm = try problems { $0.activities[0].steps[16].steps?[1].key = "symptom" }
        expectProblem(inForm, at: "/activities/0/steps/16/steps/1/key", containing: "duplicate step key")
        // Keys name the response tables' columns, which match whatever their case.
        let otherCase = try problems { $0.activities[0].steps[2].key = "SLEEPQUALITY" }
        expectProblem(otherCase, at: "/activities/0/steps/2/key", containing: "duplicate step key \"SLEEPQUALITY\"")
    }

    @Test func participantPropertyKeysThatDifferOnlyInCase() throws {
        let document = try Self.example()
        try #require(!document.participantProperties.isEmpty)
        let found = try problems {
            var twin = $0.participantProperties[0]
            twin.key = twin.key.uppercased() == twin.key ? twin.key.lowercased() : twin.key.uppercased()
            $0.participantProperties.append(twin)
        }
        expectProblem(found, at: "/participantProperties/\(document.participantProperties.count)/key", containing: "used more than once")
    }

    @Test func destinationToAnUnknownStep() throws {
        let found = try problems { $0.activities[0].steps[6].destinations?[0].destination = "nowhere" }
        expectProblem(found, at: "/activities/0/steps/6/destinations/0/destination", containing: "\"nowhere\" is not a step")
    }

    @Test func branchingConditionThatIsNotAChoice() throws {
        let found = try problems { $0.activities[0].steps[6].destinations?[0].condition = "maybe" }
        expectProblem(found, at: "/activities/0/steps/6/destinations/0/condition", containing: "not a choice value")
    }

    @Test func repeatedChoiceValue() throws {
        let found = try problems { document in
            guard case .choice(var format)? = document.activities[0].steps[3].format else { return }
            format.textChoices?[2].value = "low"
            document.activities[0].steps[3].format = .choice(format)
        }
        expectProblem(found, at: "/activities/0/steps/3/format/textChoices/2/value", containing: "\"low\" is repeated")
    }

    @Test func chartOnANonNumericQuestion() throws {
        let found = try problems { $0.dashboard.charts[0].dataSource.key = "notes" }
        expectProblem(found, at: "/dashboard/charts/0/dataSource/key", containing: "needs a numeric question; \"notes\" is a text question")
        let statistic = try problems { $0.dashboard.statistics[1].dataSource.key = "kicks" }
        expectProblem(statistic, at: "/dashboard/statistics/1/dataSource/key", containing: "numeric result of fetalKickCounter")
    }

    @Test func anchorOnANonDateQuestion() throws {
        let found = try problems { $0.activities[3].schedule.anchor?.key = "nonexistent" }
        expectProblem(found, at: "/activities/3/schedule/anchor/key", containing: "must name a question of baseline")
        let notADate = try problems { document in
            document.activities[2].steps[0] = ActivityStep(type: .question, resultType: "boolean", key: "diagnosisDate")
        }
        expectProblem(notADate, at: "/activities/3/schedule/anchor/key", containing: "an anchor must be a date question")
    }

    @Test func scheduleRunThatEndsBeforeItStarts() throws {
        let found = try problems { $0.activities[5].schedule.runs?[1].end = "2027-02-28T08:00" }
        expectProblem(found, at: "/activities/5/schedule/runs/1/end", containing: "the run ends before it starts")
        let relative = try problems { $0.activities[6].schedule.anchorRuns?[0].endDays = -2 }
        expectProblem(relative, at: "/activities/6/schedule/anchorRuns/0/endDays", containing: "ends before it starts")
        let window = try problems { $0.activities[0].schedule.endDate = "2026-12-31" }
        expectProblem(window, at: "/activities/0/schedule/endDate", containing: "before the start date")
    }

    @Test func reportsEveryProblemAtOnce() throws {
        let found = try problems { document in
            document.timeZone = "Mars/Olympus"
            document.activities[1].activityId = "daily"
            document.activities[0].schedule.dailyTimes = ["20:00", "08:00"]
            document.consent.comprehension?.questions[0].correctAnswers = ["perhaps"]
            document.notifications[2].activityId = "missing"
            document.name = LocalizedText(translations: ["es": "Duerma Bien"])
            document.tagline = LocalizedText(translations: ["en": "Sleep", "fr": "Sommeil"])
        }
        expectProblem(found, at: "/timeZone", containing: "is not an IANA time zone")
        expectProblem(found, at: "/activities/1/activityId", containing: "used more than once")
        expectProblem(found, at: "/activities/0/schedule/dailyTimes/1", containing: "increasing order")
        expectProblem(found, at: "/consent/comprehension/questions/0/correctAnswers/0", containing: "not the value of a choice")
        expectProblem(found, at: "/notifications/2/activityId", containing: "must name an activity")
        expectProblem(found, at: "/name", containing: "needs an English")
        #expect(found.count >= 6)
    }

    @Test func eligibilityAndAnchorsNeedWhatTheyUse() throws {
        let noQuestions = try problems { $0.eligibility.questions = [] }
        expectProblem(noQuestions, at: "/eligibility/questions", containing: "needs at least one question")
        let property = try problems { $0.participantProperties[0].dataType = .string }
        expectProblem(property, at: "/participantProperties/0/useAsAnchor", containing: "only a date property")
        expectProblem(property, at: "/activities/6/schedule/anchor/propertyKey", containing: "is not a date property")
    }

    @Test func taskActivitiesHoldOneTaskStep() throws {
        let found = try problems { $0.activities[8].steps.append(ActivityStep(type: .question, resultType: "boolean", key: "extra")) }
        expectProblem(found, at: "/activities/8/steps", containing: "exactly one step, of type task")
        // One still without its step is incomplete (a warning), as a questionnaire without steps is.
        let empty = try problems { $0.activities[8].steps = [] }
        #expect(!empty.contains { $0.pointer == "/activities/8/steps" })
    }

    @Test func identifiersAreChecked() throws {
        let found = try problems { $0.studyId = "bad id/../x" }
        expectProblem(found, at: "/studyId", containing: "letters, digits")
    }
}
