import ConsoleCore
import Foundation
import InMemoryPorts
import JSONText
import Logging
import StudyModels
import Testing

/// The console's use cases against a fake admin API: a section posted back (`SectionSave`) and a
/// participant's page gathered from two services (`ParticipantRecord`), each refusal and each
/// service that does not answer handled as the page needs, and nothing saved that should not be.
@Suite struct ConsoleUseCaseRulesTests {
    static let logger = Logger(label: "test")
    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")

    static func api() throws -> FakeAdminAPI {
        let document = try JSONValue.parse(Array(try Data(contentsOf: exampleURL)), budget: .studyDocument)
        let summary = StudySummary(
            studyId: "SLEEPWELL", appId: "SLEEPAPP", name: "Sleep Well", status: .preLaunch,
            draftUpdatedAt: Date(timeIntervalSince1970: 1_800_000_000), draftUpdatedBy: "ana@example.org", draftRevision: 4,
            role: .editor)
        return FakeAdminAPI(summary: summary, draft: document)
    }

    static let basics = StudySection.all(apps: [AppDefinition(appId: "SLEEPAPP", orgId: "ORG", name: "Sleep", kind: .standalone)])
        .first { $0.slug == "basics" }!

    /// The page as drawn from the fake's draft now.
    static func drawn(_ api: FakeAdminAPI) -> SectionSave.Drawn {
        SectionSave.Drawn(
            summary: api.summary, draft: api.draft, revision: AdminAPIClient.etag(api.summary.draftRevision), editable: true)
    }

    /// The basics form as drawn, with the study's English title changed to `title`.
    static func form(_ drawn: SectionSave.Drawn, title: String) throws -> FormFields {
        var form = basics.values(in: drawn.draft)
        let field = try #require(form.pairs.first { $0.value == "Sleep Well" }?.name, "the title's field")
        form.set(field, title)
        form.set("base", basics.fingerprint(of: drawn.draft))
        return form
    }

    static func title(_ document: JSONValue) -> String? {
        document[pointer: JSONPointer(tokens: ["name", "en"])]?.text
    }

    @Test func aSectionIsSavedOverTheRevisionItWasDrawnFrom() async throws {
        let api = try Self.api()
        let drawn = Self.drawn(api)
        let outcome = try await SectionSave(drafts: api).post(
            try Self.form(drawn, title: "Sleep Better"), to: Self.basics, of: "SLEEPWELL", drawn: drawn, token: "t", logger: Self.logger)
        guard case .saved(let saved, let document) = outcome else {
            Issue.record("saving answered \(outcome)")
            return
        }
        #expect(saved.warnings.isEmpty)
        #expect(Self.title(document) == "Sleep Better")
        #expect(Self.title(api.draft) == "Sleep Better")
        #expect(api.calls == ["saveDraft"])
    }

    @Test func aSectionAColleagueChangedMeanwhileIsNotOverwritten() async throws {
        let api = try Self.api()
        let drawn = Self.drawn(api)
        let form = try Self.form(drawn, title: "Mine")
        // The colleague's save changes the same section; the page is drawn again from it.
        var theirs = api.draft
        try theirs.set(.string("Theirs"), at: JSONPointer(tokens: ["name", "en"]))
        api.saveElsewhere(theirs, by: "ben@example.org")
        let outcome = try await SectionSave(drafts: api).post(
            form, to: Self.basics, of: "SLEEPWELL", drawn: Self.drawn(api), token: "t", logger: Self.logger)
        guard case .changedMeanwhile(let current, let by, _) = outcome else {
            Issue.record("a stale section answered \(outcome)")
            return
        }
        #expect(by == "ben@example.org")
        #expect(current == Self.basics.fingerprint(of: theirs))
        #expect(Self.title(api.draft) == "Theirs")
        #expect(!api.calls.contains("saveDraft"))
    }

    @Test func aDraftSavedBetweenReadingAndWritingIsAConflictNotAnOverwrite() async throws {
        let api = try Self.api()
        let drawn = Self.drawn(api)
        // Another section saved between this page's read and its save: the section itself is
        // unchanged, the revision is not.
        var other = api.draft
        try other.set(.string("Someone else's activity title"), at: JSONPointer(tokens: ["activities", "0", "title"]))
        api.saveElsewhere(other, by: "ben@example.org")
        let outcome = try await SectionSave(drafts: api).post(
            try Self.form(drawn, title: "Mine"), to: Self.basics, of: "SLEEPWELL", drawn: drawn, token: "t", logger: Self.logger)
        guard case .refused(let problems, let conflict, _) = outcome else {
            Issue.record("a save over a newer revision answered \(outcome)")
            return
        }
        #expect(conflict)
        #expect(problems.map(\.message) == ["the draft changed since it was read"])
        #expect(Self.title(api.draft) == "Sleep Well")
    }

    @Test func theAdminAPIsProblemsComeBackEachAtItsField() async throws {
        let api = try Self.api()
        api.refuseDrafts([ValidationProblem(pointer: "/name/en", message: "A title is 1 to 200 characters.")])
        let drawn = Self.drawn(api)
        let outcome = try await SectionSave(drafts: api).post(
            try Self.form(drawn, title: ""), to: Self.basics, of: "SLEEPWELL", drawn: drawn, token: "t", logger: Self.logger)
        guard case .refused(let problems, let conflict, _) = outcome else {
            Issue.record("a refused draft answered \(outcome)")
            return
        }
        #expect(!conflict)
        #expect(problems == [ValidationProblem(pointer: "/name/en", message: "A title is 1 to 200 characters.")])
        #expect(Self.title(api.draft) == "Sleep Well")
    }

    @Test func aRowEditShowsThePageAgainAndSavesNothing() async throws {
        let api = try Self.api()
        let drawn = Self.drawn(api)
        let overview = try #require(StudySection.all(apps: []).first { $0.slug == "overview" })
        var form = overview.values(in: drawn.draft)
        form.set("base", "b")
        form.set("op", "add /overview")
        let outcome = try await SectionSave(drafts: api).post(
            form, to: overview, of: "SLEEPWELL", drawn: drawn, token: "t", logger: Self.logger)
        guard case .edited(let edited, let base) = outcome else {
            Issue.record("adding a row answered \(outcome)")
            return
        }
        #expect(base == "b")
        #expect(edited.pairs.count > form.pairs.count, "the new row's fields are on the page")
        form.set("op", "remove /overview/999")
        let refused = try await SectionSave(drafts: api).post(
            form, to: overview, of: "SLEEPWELL", drawn: drawn, token: "t", logger: Self.logger)
        guard case .editRefused = refused else {
            Issue.record("removing a row that is not there answered \(refused)")
            return
        }
        #expect(api.calls.isEmpty)
    }

    // MARK: ParticipantRecord

    static func detail(enrolled: Bool = true, linked: Bool = true) throws -> ParticipantDetail {
        let json = """
            {"participant": {"participantId": "p-1", "email": "pat@example.org", "status": "enrolled",
              \(enrolled ? #""enrolledAt": "2026-03-01T10:00:00Z","# : "")
              "consentVersions": ["1.0"], "completion": 50, "adherence": 40, "owesConsent": false},
             "account": {"verified": true}, "consents": [], "activities": [], "mayReadConsentPDFs": false
             \(linked ? #", "appTokenSHA256": "hash-1""# : "")}
            """
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ParticipantDetail.self, from: Data(json.utf8))
    }

    static func responses() throws -> [ResponseSummary] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ResponseSummaryList.self, from: Data("""
            {"responses": [{"id": 11, "participantId": 3, "activityId": "daily", "version": "1.0", "status": "processed",
              "receivedAt": "2026-03-02T09:00:00Z", "attempts": 1, "forwardAttempts": 0}]}
            """.utf8)).responses
    }

    static let runs = ParticipantRunsReply(
        timeZone: "UTC", timeZoneSource: "study", from: "2026-03-01T00:00:00+00:00", to: "2026-03-10T00:00:00+00:00", runs: [],
        cutAt: nil)

    static let now = Date(timeIntervalSince1970: 1_772_700_000)

    static func record(_ api: FakeAdminAPI, at address: ParticipantRecord.Address = .number(3)) async throws(AdminAPIError)
        -> ParticipantRecord.Record
    {
        try await ParticipantRecord(records: api).record(
            address, of: "SLEEPWELL", shown: RunTimeline.Shown(start: nil, now: now), now: now, token: "t", logger: logger)
    }

    /// Participant p-1, number 3, linked by hash-1: enrolled, with runs and one response.
    static func held(_ api: FakeAdminAPI, runsProblem: String? = nil) throws {
        api.hold(
            ParticipantRecordReply(
                participant: try detail(), runs: runsProblem == nil ? runs : nil, runsProblem: runsProblem, weeks: nil),
            data: ParticipantDataReply(participantId: 3, appTokenSHA256: "hash-1", responses: try responses(), archives: []))
    }

    @Test func aPageAtTheirNumberAsksEachServiceOnceTheDataFirst() async throws {
        let api = try Self.api()
        try Self.held(api)
        let record = try await Self.record(api)
        #expect(record.number == .known(3))
        #expect(record.detail.participant.participantId == "p-1")
        guard case .shown = record.runs, case .listed(let responses, let archives) = record.responses else {
            Issue.record("runs \(record.runs), responses \(record.responses)")
            return
        }
        #expect(responses.map(\.id) == [11])
        #expect(archives.isEmpty)
        // The number's hash names them to registration: one call to each service, in that order.
        #expect(api.calls == ["participantData", "participantRecord"])
    }

    @Test func aPageByRegistrationsIdAsksRegistrationFirstThenTheDataByTheirHash() async throws {
        let api = try Self.api()
        try Self.held(api)
        let record = try await Self.record(api, at: .participantId("p-1"))
        #expect(record.number == .known(3))
        guard case .listed(let responses, _) = record.responses else {
            Issue.record("responses \(record.responses)")
            return
        }
        #expect(responses.map(\.id) == [11])
        #expect(api.calls == ["participantRecord", "participantData"])
    }

    @Test func aNumberWithNoAccountBehindItHasNoPage() async throws {
        let api = try Self.api()
        api.hold(
            ParticipantRecordReply(participant: try Self.detail(), runs: Self.runs, runsProblem: nil, weeks: nil),
            data: ParticipantDataReply(participantId: 3, appTokenSHA256: nil, responses: [], archives: []))
        // The number is theirs, but no app's account stands for it: registration is not asked.
        let unlinked = await #expect(throws: AdminAPIError.self) { try await Self.record(api) }
        #expect(unlinked?.status == 404)
        #expect(unlinked?.message.contains("no account in the app") == true)
        #expect(api.calls == ["participantData"])
        // A number the study does not have.
        let unknown = await #expect(throws: AdminAPIError.self) { try await Self.record(api, at: .number(9)) }
        #expect(unknown?.status == 404)
        // A hash registration no longer knows (their account was deleted): the same page.
        api.hold(
            ParticipantRecordReply(participant: try Self.detail(linked: false), runs: nil, runsProblem: nil, weeks: nil),
            data: ParticipantDataReply(participantId: 3, appTokenSHA256: "hash-1", responses: [], archives: []))
        let gone = await #expect(throws: AdminAPIError.self) { try await Self.record(api) }
        #expect(gone?.status == 404)
        #expect(gone?.message.contains("no account in the app") == true)
    }

    @Test func eachPartThatCannotBeHadLeavesThePageStandingAndSaysSo() async throws {
        let api = try Self.api()
        try Self.held(api, runsProblem: "study-metadata cannot be reached now to read the study's schedule")
        api.fail(.data, status: 502)
        let record = try await Self.record(api, at: .participantId("p-1"))
        #expect(record.number == .unavailable)
        #expect(record.weeks == nil)
        guard case .unavailable(let message) = record.runs, case .unavailable = record.responses else {
            Issue.record("runs \(record.runs), responses \(record.responses)")
            return
        }
        #expect(message == "study-metadata cannot be reached now to read the study's schedule")
        // At a number, the data is the way to them: without it there is no page.
        await #expect(throws: AdminAPIError.self) { try await Self.record(api) }
    }

    @Test func someoneNotEnrolledOrNotLinkedIsAskedOnlyWhatTheyHave() async throws {
        let api = try Self.api()
        api.hold(ParticipantRecordReply(participant: try Self.detail(enrolled: false, linked: false), runs: nil, runsProblem: nil, weeks: nil))
        let record = try await Self.record(api, at: .participantId("p-1"))
        #expect(record.number == .known(nil))
        guard case .notEnrolled = record.runs, case .notLinked = record.responses else {
            Issue.record("runs \(record.runs), responses \(record.responses)")
            return
        }
        #expect(api.calls == ["participantRecord"])
        api.fail(.record, status: 404)
        await #expect(throws: AdminAPIError.self, "without registration's record there is no page") {
            try await Self.record(api, at: .participantId("p-1"))
        }
    }
}
