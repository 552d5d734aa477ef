import Foundation
import JSONText
import StudyModels
import Testing
import TestSupport

/// Reading a MyStudies deployment's study-metadata replies into studies here
/// (`MyStudiesStudyPlan`), from replies its own code shaped: the MyStudies Android app's recorded
/// study-metadata replies and the original response server's activity designs (Tests/Fixtures,
/// PROVENANCE.md). What each reply says is the oracle: the times, labels and texts in the files.
@Suite struct MyStudiesStudyPlanTests {
    static let folder = Conformance.root.appendingPathComponent("mystudies-api")

    static func reply(_ name: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func design(_ name: String) throws -> JSONValue {
        try JSONDecoder().decode(
            JSONValue.self, from: Data(contentsOf: Conformance.labkey.appendingPathComponent("SurveyMetadata/\(name)")))
    }

    static let schedules = ["onetime", "daily", "dailywithinaday", "manuallschedule", "monthly", "weekly"]

    /// The recorded `activityList` entries with the recorded designs, and NewSurvey at the
    /// versions the original response server's tests served (11 is malformed there, 12 missing).
    static func export(status: String = "Active") throws -> MyStudiesStudyExport {
        var items = try schedules.map { try reply("activityList-\($0).json") }
        var designs: [MyStudiesStudyExport.ActivityReply] = []
        for item in items {
            let id = item["activityId"]?.string ?? ""
            designs.append(.init(activityId: id, version: "1.0", reply: try reply("activity-CBQ-1.2.json")))
        }
        var newSurvey = items[0].object ?? [:]
        newSurvey["activityId"] = try json(#""NewSurvey""#)
        newSurvey["activityVersion"] = try json(#""13""#)
        items.append(.object(newSurvey))
        for version in [1, 2, 3, 10, 13] {
            designs.append(.init(
                activityId: "NewSurvey", version: String(version), reply: try design("DYNAMICSCHEMASTUDY_NewSurvey_\(version).json")))
        }
        // The original's malformed design on purpose: what the reader keeps of a reply that is not JSON.
        #expect((try? design(Conformance.malformedDesign)) == nil)
        designs.append(.init(activityId: "NewSurvey", version: "11", reply: nil, refusal: "HTTP 200 whose body is not JSON"))
        designs.append(.init(activityId: "NewSurvey", version: "12", reply: nil, refusal: "HTTP 400 No activity found"))
        let listing = try json("""
            {"studyId": "REGteststudy", "studyVersion": "2.3", "title": "Regression study", "category": "Health",
             "sponsorName": "HPHCI", "tagline": "", "status": "\(status)", "logo": "",
             "settings": {"enrolling": true, "rejoin": false, "platform": "all"}}
            """)
        let study = MyStudiesExportFixture.study(
            listing: listing, eligibilityConsent: try reply("eligibilityConsent.json"),
            activityList: .object(JSONObject(pairs: [("message", try json(#""SUCCESS""#)), ("activities", .array(items))])),
            activities: designs)
        return MyStudiesStudyExport(source: "https://wcp.example.org/StudyMetaData", readAt: "2026-12-05T00:00:00Z", studies: [study])
    }

    static func plan(status: String = "Active", zone: String = "UTC") throws -> MyStudiesStudyPlan {
        MyStudiesStudyPlan.read(try export(status: status).studies[0], appId: "MOVEDAPP", timeZone: TimeZone(identifier: zone)!)
    }

    @Test func theStudyKeepsItsListingVersionAndConsentVersion() throws {
        let plan = try Self.plan()
        let current = try #require(plan.versions.last)
        #expect(current.studyId == "REGteststudy")
        #expect(current.appId == "MOVEDAPP")
        #expect(current.name.text(for: nil) == "Regression study")
        #expect(current.sponsor?.text(for: nil) == "HPHCI")
        #expect(current.tagline == nil)
        #expect(current.rejoin.allowed == false)
        #expect(current.platforms == [.ios, .android])
        #expect(current.versionLabel == "2.3")
        #expect(current.consent.versionLabel == "1.1")
        #expect(StudyValidator.validate(current).isEmpty)
    }

    @Test func eligibilityAndConsentReadAsTheAppsWereServedThem() throws {
        let current = try #require(try Self.plan().versions.last)
        let eligibility = current.eligibility
        #expect(eligibility.type == .combined)
        #expect(eligibility.tokenTitle?.text(for: nil).hasPrefix("This study allows only pre-screened participants") == true)
        // The question's words, where the reply put them (its text; the title repeats the key).
        #expect(eligibility.questions.map(\.key) == ["E1", "E2"])
        #expect(eligibility.questions.map { $0.text.text(for: nil) } == ["Had lunch?", "Are you sleepy?"])
        #expect(eligibility.questions.map(\.passingAnswer) == [true, false])

        let consent = current.consent
        #expect(consent.visualScreens.map(\.type) == [.overview, .custom])
        #expect(consent.visualScreens[1].title.text(for: nil) == "Live Blood Analysis: Science or Quackery?")
        let comprehension = try #require(consent.comprehension)
        #expect(comprehension.passScore == 2)
        #expect(comprehension.questions.map(\.key) == ["3", "4"])
        #expect(comprehension.questions[0].text.text(for: nil) == "Which device are you using?")
        #expect(comprehension.questions[0].correctAnswers == ["ios", "android"])
        #expect(comprehension.questions[0].evaluation == .all)
        #expect(comprehension.questions[0].selectionStyle == .multiple)
        #expect(comprehension.questions[1].evaluation == .any)
        // An empty sharing screen is no sharing screen; the review had no HTML, so the document
        // is built from the sections.
        #expect(consent.sharing == nil)
        #expect(consent.review.type == .sections)
        #expect(consent.review.reasonForConsent?.text(for: nil).hasPrefix("By agreeing to this you confirm") == true)
    }

    @Test func eachScheduleKindReadsBackAsTheAppsComputeIt() throws {
        let current = try #require(try Self.plan().versions.last)
        func schedule(_ id: String) throws -> Schedule {
            try #require(current.activities.first { $0.activityId == id }).schedule
        }
        let once = try schedule("OneTimeTest")
        #expect(once.frequency == .oneTime && once.startDate == "2020-10-20" && once.time == "11:25:00")
        #expect(once.endDate == "2020-10-31" && once.launchWithStudy == nil && once.studyLifetime == nil)
        let daily = try schedule("DailyTest")
        #expect(daily.frequency == .daily && daily.startDate == "2020-10-20" && daily.endDate == "2020-10-22")
        #expect(daily.dailyTimes == ["11:25:00"])
        #expect(try schedule("DailyMultipleText").dailyTimes == ["11:25:00", "21:28:00"])
        let manual = try schedule("CustomTest")
        #expect(manual.runs == [
            ScheduledRun(start: "2020-10-20T11:30:00", end: "2020-10-21T11:30:00"),
            ScheduledRun(start: "2020-10-22T11:30:00", end: "2020-10-23T11:30:00"),
        ])
        let monthly = try schedule("MonthlyTest")
        #expect(monthly.frequency == .monthly && monthly.startDate == "2020-10-20" && monthly.time == "11:30:00")
        #expect(monthly.endDate == "2021-06-20")
        let weekly = try schedule("WeeklyTest")
        #expect(weekly.frequency == .weekly && weekly.startDate == "2020-10-20" && weekly.endDate == "2020-11-24")
        #expect(weekly.anchor == nil)

        // The same instants in another zone: local dates and times of that zone.
        let inNewYork = try #require(try Self.plan(zone: "America/New_York").versions.last)
        let shifted = try #require(inNewYork.activities.first { $0.activityId == "OneTimeTest" }).schedule
        #expect(shifted.startDate == "2020-10-20" && shifted.time == "07:25:00")
        // 23:59:59 UTC is 19:59:59 in New York: the end of the day there is not the source's end.
        let endFinding = try Self.plan(zone: "America/New_York").findings.first { $0.at.hasSuffix("/endTime") && $0.at.contains("activities/0") }
        #expect(endFinding?.effect == .changed)
    }

    @Test func earlierVersionsBecomeTheHistoryAndWhatIsMissingIsSaid() throws {
        let plan = try Self.plan()
        // NewSurvey was served at 1, 2, 3, 10 and 13 (11 is malformed, 12 was refused): five
        // designs, so five versions, the first four labelled as history.
        #expect(plan.versions.count == 5)
        #expect(plan.versions.map { $0.versionLabel } == ["moved-1", "moved-2", "moved-3", "moved-4", "2.3"])
        let labels = plan.versions.map { document in document.activities.first { $0.activityId == "NewSurvey" }?.versionLabel }
        #expect(labels == ["1", "2", "3", "10", "13"])
        // Activities with one design hold it in every version.
        #expect(plan.versions.allSatisfy { $0.activities.first { $0.activityId == "WeeklyTest" }?.versionLabel == "1.0" })
        #expect(plan.counts.activities == 7)
        #expect(plan.counts.activityVersions == 11)
        let missing = plan.findings.filter { $0.effect == .notImported }
        // The recorded replies have no studyInfo: that is said too.
        #expect(missing.count == 3)
        #expect(missing.contains { $0.at == "studyInfo" })
        #expect(missing.contains { $0.message.contains("version 12 of NewSurvey") && $0.message.contains("HTTP 400 No activity found") })
        #expect(missing.contains { $0.at.contains("activityVersion=11") })
        #expect(plan.counts.notImported == 3)
    }

    @Test func anUpcomingStudyComesOverAsItIsNow() throws {
        let plan = try Self.plan(status: "Upcoming")
        #expect(plan.versions.count == 1)
        #expect(plan.versions[0].versionLabel == "2.3")
        #expect(plan.findings.contains { $0.at == "studyList#/status" })
    }

    /// An activity the source deleted (`state: deleted`, as `activityList` keeps it) keeps its
    /// design in the rebuilt history, for its responses, and is not in the study as it is now.
    @Test func aDeletedActivityIsKeptInTheHistoryOnly() throws {
        var deleted = try Self.reply("activityList-weekly.json").object ?? [:]
        deleted["state"] = try json(#""deleted""#)
        let study = MyStudiesExportFixture.study(
            listing: try json(#"{"studyId": "GONE", "studyVersion": "1.3", "status": "Active"}"#),
            activityList: .object(JSONObject(pairs: [("activities", .array([try Self.reply("activityList-daily.json"), .object(deleted)]))])),
            activities: [
                .init(activityId: "DailyTest", version: "1.0", reply: try Self.reply("activity-CBQ-1.2.json")),
                .init(activityId: "WeeklyTest", version: "1.0", reply: try Self.reply("activity-CBQ-1.2.json")),
            ])
        let plan = MyStudiesStudyPlan.read(study, appId: "APP", timeZone: TimeZone(identifier: "UTC")!)
        #expect(plan.versions.count == 2)
        #expect(plan.versions.map { $0.activities.map(\.activityId) } == [["DailyTest", "WeeklyTest"], ["DailyTest"]])
        #expect(plan.versions.map(\.versionLabel) == ["moved-1", "1.3"])
        #expect(plan.findings.contains { $0.effect == .note && $0.message.contains("WeeklyTest was deleted at the source") })
    }

    @Test func versionLabelsAreOrderedAsTheirNumbers() {
        #expect(MyStudiesStudyPlan.ordered(["1.10", "2.0", "1.9", "1.2"], current: "2.1") == ["1.2", "1.9", "1.10", "2.0", "2.1"])
        #expect(MyStudiesStudyPlan.ordered(["beta", "3", "1"], current: "4") == ["1", "3", "beta", "4"])
        #expect(MyStudiesStudyPlan.ordered(["2", "2", "1"], current: "2") == ["1", "2"])
    }

    @Test func repliesThatCannotBeReadAreReportedNotTrapped() throws {
        let broken = try json("""
            {"activityId": "Broken", "activityVersion": 1.5, "schedulingType": "AnchorDate",
             "anchorDate": {"sourceType": "Nowhere"}, "frequency": {"type": "Hourly"}}
            """)
        let badTimes = try json("""
            {"activityId": "BadTimes", "activityVersion": "1.0", "startTime": "2020-13-45T99:99:99.000+9999", "endTime": 12,
             "schedulingType": "Regular", "frequency": {"type": "Manually Schedule", "runs": [{"startTime": "yesterday"}]}}
            """)
        let hugeAnchor = try json("""
            {"activityId": "Huge", "activityVersion": "1.0", "schedulingType": "AnchorDate",
             "anchorDate": {"sourceType": "EnrollmentDate", "start": {"anchorDays": 9.3e18, "time": "25:00"},
                            "end": {"anchorDays": "-99999999999999999999", "repeatInterval": -1}},
             "frequency": {"type": "Weekly"}}
            """)
        let study = MyStudiesExportFixture.study(
            listing: try json(#"{"studyId": "BROKEN", "studyVersion": 1.1, "status": "Active"}"#),
            activityList: .object(JSONObject(pairs: [("activities", .array([broken, badTimes, hugeAnchor, try json(#""not an object""#)]))])),
            activities: [
                .init(activityId: "BadTimes", version: "1.0", reply: try json(#"{"activity": {"steps": "no"}}"#)),
                .init(activityId: "Huge", version: "1.0", reply: try Self.reply("activity-AT-103-1.json")),
            ])
        let plan = MyStudiesStudyPlan.read(study, appId: "APP", timeZone: TimeZone(identifier: "UTC")!)
        #expect(plan.versions.count == 1)
        let current = plan.versions[0]
        #expect(current.activities.map(\.activityId) == ["Huge"])
        let huge = current.activities[0].schedule
        // Numbers past what a schedule may hold are not read, rather than kept or trapped on.
        #expect(huge.startDays == 0 && huge.endDays == nil && huge.repeatCount == nil && huge.time == nil)
        #expect(plan.findings.contains { $0.message.contains("\"Hourly\"") })
        #expect(plan.findings.contains { $0.message.contains("BadTimes") && $0.message.contains("could not be read") })
        #expect(plan.findings.contains { $0.at.hasSuffix("/activities/3") && $0.message.contains("activityId") })
        #expect(plan.versions[0].versionLabel == "1.1")
    }
}

func json(_ text: String) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
}

/// A study's replies for the tests, with the replies a test does not need left out.
enum MyStudiesExportFixture {
    static func study(
        listing: JSONValue, eligibilityConsent: JSONValue? = nil, activityList: JSONValue,
        activities: [MyStudiesExportFixture.Reply]
    ) -> MyStudiesStudyExport.Study {
        MyStudiesStudyExport.Study(
            listing: listing, eligibilityConsent: eligibilityConsent, activityList: activityList, activities: activities)
    }

    typealias Reply = MyStudiesStudyExport.ActivityReply
}
