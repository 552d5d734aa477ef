import ConsoleCore
import Foundation
import JSONText
import StudyModels
import Testing

/// The builder's pages read a draft into form values and write them back: an untouched page
/// changes nothing, and each kind of field writes what the study document expects.
@Suite struct StudySectionTests {
    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")

    static func example() throws -> JSONValue {
        try JSONValue.parse(Array(try Data(contentsOf: exampleURL)), budget: .studyDocument)
    }

    static func study(_ json: JSONValue) throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: Data(json.serialized().utf8))
    }

    static let apps = [AppDefinition(appId: "SLEEPAPP", orgId: "ORG", name: "Sleep", kind: .standalone)]

    @Test func savingEveryUntouchedPageOfTheExampleChangesNothing() throws {
        let document = try Self.example()
        let sections = StudySection.all(apps: Self.apps)
        #expect(sections.map(\.slug) == [
            "basics", "settings", "overview", "eligibility", "consent", "activities", "properties", "resources", "notifications", "dashboard",
        ])
        let activities = try Self.study(document).activities
        #expect(activities.count == 9)
        let steps = activities.enumerated().flatMap { activity in
            activity.element.steps.enumerated().map {
                StudySection.step(index: activity.offset, activityId: activity.element.activityId, stepIndex: $0.offset, key: $0.element.key)
            }
        }
        #expect(steps.count == activities.map(\.steps.count).reduce(0, +))
        #expect(steps.count > 9)
        let pages = sections + activities.enumerated().map { StudySection.activity(index: $0.offset, activityId: $0.element.activityId) }
            + steps
        for section in pages {
            let saved = try section.applying(section.values(in: document), to: document)
            #expect(try Self.study(saved) == Self.study(document), "page \(section.slug)")
        }
    }

    @Test func aProblemInsideAnActivityLeadsToItsActivityOrStepPage() throws {
        let document = try Self.example()
        let activity = try #require(try Self.study(document).activities.first)
        let step = try #require(activity.steps.first)
        let stepPage = StudySection.activityPage(holding: JSONPointer("/activities/0/steps/0/format/maxValue")!, in: document)
        #expect(stepPage?.slug == "activities/\(activity.activityId)/steps/\(step.key)")
        #expect(stepPage?.field(holding: JSONPointer("/activities/0/steps/0/title")!, form: stepPage!.values(in: document)) != nil)
        let activityPage = StudySection.activityPage(holding: JSONPointer("/activities/0/schedule/frequency")!, in: document)
        #expect(activityPage?.slug == "activities/\(activity.activityId)")
        #expect(StudySection.activityPage(holding: JSONPointer("/activities/99/title")!, in: document) == nil)
        #expect(StudySection.activityPage(holding: JSONPointer("/activities/0/steps/99/key")!, in: document)?.slug == activityPage?.slug)
        #expect(StudySection.activityPage(holding: JSONPointer("/consent/review")!, in: document) == nil)
        // A problem with a list itself (no rows, too many) finds the list.
        let list = StudySection.activities.field(holding: JSONPointer("/activities")!, form: StudySection.activities.values(in: document))
        #expect(list?.0.label == "Activities" && list?.name == "/activities")
    }

    @Test func anUntouchedPageOfAStudyThatLeftDefaultsOutKeepsThem() throws {
        let minimal = JSONValue.object([
            "studyId": .string("MIN"), "appId": .string("SLEEPAPP"), "name": .string("Minimal"), "timeZone": .string("UTC"),
            "eligibility": .object(["type": .string("token")]), "consent": .object([:]),
        ])
        let settings = StudySection.settings
        let saved = try settings.applying(settings.values(in: minimal), to: minimal)
        let study = try Self.study(saved)
        #expect(study.enrolling)
        #expect(study.rejoin.allowed)
        #expect(study.platforms == [.ios, .android])
        #expect(study.languages == ["en"])
        #expect(study.withdrawal.type == .noAction)
    }

    @Test func eachKindOfFieldWritesWhatTheDocumentExpects() throws {
        let document = try Self.example()
        var form = StudySection.basics(apps: Self.apps).values(in: document)
        form = FormFields(form.pairs.filter { !["/name/en", "/name/es", "/tagline/en", "/tagline/es", "/website"].contains($0.name) })
        form.append("/name/en", "  Sleep better\r\n")
        form.append("/name/es", "Dormir mejor")
        form.append("/tagline/en", "One line")
        form.append("/tagline/es", "")
        form.append("/website", "")
        let saved = try StudySection.basics(apps: Self.apps).applying(form, to: document)
        #expect(saved[pointer: JSONPointer("/name")!] == .object(["en": .string("Sleep better"), "es": .string("Dormir mejor")]))
        // Spanish emptied: the translation map keeps English alone (the spelling the document had).
        #expect(saved[pointer: JSONPointer("/tagline")!] == .object(["en": .string("One line")]))
        #expect(saved[pointer: JSONPointer("/website")!] == nil)

        var settingsForm = StudySection.settings.values(in: document)
        settingsForm = FormFields(settingsForm.pairs.filter { !["/enrolling", "/platforms"].contains($0.name) })
        settingsForm.append("/platforms", "android")
        settingsForm.append("/platforms", "windows")  // not an option: left out
        let settings = try StudySection.settings.applying(settingsForm, to: document)
        #expect(settings[pointer: JSONPointer("/enrolling")!] == .bool(false))
        #expect(settings[pointer: JSONPointer("/platforms")!] == .array([.string("android")]))
    }

    @Test func aNumberThatIsNotOneIsSentAsTypedForTheAdminAPIToName() {
        let field = FormField("/dashboard/statistics/0/value", "Value", .number)
        #expect(field.value(from: FormFields([("/dashboard/statistics/0/value", "12.5")])) == .number(12.5))
        #expect(field.value(from: FormFields([("/dashboard/statistics/0/value", "twelve")])) == .string("twelve"))
        #expect(field.value(from: FormFields([("/dashboard/statistics/0/value", " ")])) == nil)
    }

    @Test func aProblemIsShownAtTheFieldItLiesIn() throws {
        let field = FormField("/name", "Title", .localized(long: false))
        let problems = [
            ValidationProblem(pointer: "/name", message: "needs an English text"),
            ValidationProblem(pointer: "/name/fr", message: "\"fr\" is not one of the study's languages"),
            ValidationProblem(pointer: "/names", message: "elsewhere"),
        ]
        let view = FieldView(field: field, values: FormFields(), problems: problems, spanish: false, readOnly: false)
        #expect(view.problems == ["needs an English text", "\"fr\" is not one of the study's languages"])
        #expect(view.invalid)
        #expect(view.id == "f-name")
    }

    @Test func aSectionsFingerprintMovesOnlyWhenTheSectionChanges() throws {
        let document = try Self.example()
        let basics = StudySection.basics(apps: Self.apps)
        var otherSection = document
        try otherSection.set(.bool(false), at: JSONPointer("/enrolling")!)
        #expect(basics.fingerprint(of: otherSection) == basics.fingerprint(of: document))
        var thisSection = document
        try thisSection.set(.string("Renamed"), at: JSONPointer("/name")!)
        #expect(basics.fingerprint(of: thisSection) != basics.fingerprint(of: document))
    }
}

/// Rows added, removed and moved on a page before it is saved, and optional parts behind a
/// checkbox.
@Suite struct FormListTests {
    static let consent = StudySection.consent

    static func document() throws -> JSONValue {
        try StudySectionTests.example()
    }

    @Test func rowsAreAddedRemovedAndMovedWithTheMembersThePageDoesNotShow() throws {
        var document = try Self.document()
        // A member the page does not show, on the second section: it must follow its row.
        try document.set(.string("https://example.org/privacy"), at: JSONPointer("/consent/visualScreens/1/url")!)
        let screens = try #require(document[pointer: JSONPointer("/consent/visualScreens")!])
        guard case .array(let original) = screens else { Issue.record("no screens"); return }
        #expect(original.count >= 3)
        var form = Self.consent.values(in: document)

        form = try #require(FormEdit("up /consent/visualScreens/1")?.applied(to: form))
        form = try #require(FormEdit("remove /consent/visualScreens/2")?.applied(to: form))
        let add = try #require(FormEdit("add /consent/visualScreens"))
        form = try #require(Self.consent.editing(form, add))
        #expect(form["/consent/visualScreens#count"] == String(original.count))
        let last = original.count - 1
        form.set("/consent/visualScreens/\(last)/title/en", "Added")
        form.set("/consent/visualScreens/\(last)/text/en", "A new section")

        let saved = try Self.consent.applying(form, to: document)
        guard case .array(let rows) = saved[pointer: JSONPointer("/consent/visualScreens")!] else { Issue.record("no rows"); return }
        #expect(rows.count == original.count)
        #expect(rows[0] == original[1], "moved up, with its url")
        #expect(rows[0][pointer: JSONPointer("/url")!] == .string("https://example.org/privacy"))
        #expect(rows[1] == original[0])
        #expect(Array(rows[2..<last]) == Array(original[3...]), "the removed row is gone, the rest keep their order")
        // An added section starts as the list's new item: custom, shown as a screen.
        #expect(rows[last] == .object(["type": .string("custom"), "title": .string("Added"), "text": .string("A new section")]))
    }

    /// Rows added and left as they were drawn are not saved when they come last (so they cannot
    /// keep the page from saving); a blank row before one typed in is kept, where its problems
    /// name it; a list that was absent stays absent.
    @Test func aBlankRowAddedAndNeverTouchedIsNotSaved() throws {
        let document = try Self.document()
        guard case .array(let original) = document[pointer: JSONPointer("/consent/visualScreens")!] else { Issue.record("no screens"); return }
        let add = try #require(FormEdit("add /consent/visualScreens"))
        var form = try #require(Self.consent.editing(Self.consent.values(in: document), add))
        form = try #require(Self.consent.editing(form, add))
        let first = original.count, second = original.count + 1
        // Two blank rows at the end: neither is saved, and the page saves as it was.
        let untouched = try Self.consent.applying(form, to: document)
        #expect(untouched == document)
        // The first typed in: it is saved, the blank one after it is not.
        var typed = form
        typed.set("/consent/visualScreens/\(first)/title/en", "Added")
        typed.set("/consent/visualScreens/\(first)/text/en", "A new section")
        guard case .array(let rows) = try Self.consent.applying(typed, to: document)[pointer: JSONPointer("/consent/visualScreens")!] else {
            Issue.record("no rows"); return
        }
        #expect(rows.count == original.count + 1)
        // The second typed in, the first left blank: both kept, so the blank one's problems name
        // the row the page shows.
        var gap = form
        gap.set("/consent/visualScreens/\(second)/title/en", "Added")
        guard case .array(let kept) = try Self.consent.applying(gap, to: document)[pointer: JSONPointer("/consent/visualScreens")!] else {
            Issue.record("no rows"); return
        }
        #expect(kept.count == original.count + 2)
        // A choice made on a row is touching it; a browser sending a select's first option
        // ("overview", the first kind) for one left alone is not.
        var chosen = form
        chosen.set("/consent/visualScreens/\(second)/type", "privacy")
        #expect(try Self.consent.applying(chosen, to: document)[pointer: JSONPointer("/consent/visualScreens/\(second)/type")!] == .string("privacy"))
        var leftAlone = form
        leftAlone.set("/consent/visualScreens/\(second)/type", "overview")
        leftAlone.set("/consent/visualScreens/\(first)/type", "overview")
        #expect(try Self.consent.applying(leftAlone, to: document) == document)
    }

    @Test func anEditThatCannotBeMadeIsRefused() throws {
        let form = Self.consent.values(in: try Self.document())
        #expect(FormEdit("remove /consent/visualScreens/99")?.applied(to: form) == nil)
        #expect(FormEdit("up /consent/visualScreens/0")?.applied(to: form) == nil)
        let addElsewhere = try #require(FormEdit("add /not/a/list"))
        #expect(Self.consent.editing(form, addElsewhere) == nil)
        #expect(FormEdit("explode /consent/visualScreens/0") == nil)
        var full = FormFields([("/x#count", String(FormList.maxRows))])
        #expect(FormEdit("add /x")?.applied(to: full) == nil)
        full = FormFields([("/x#count", "2"), ("/x/1/a", "gone"), ("/x/10/a", "kept")])
        let removed = try #require(FormEdit("remove /x/1")?.applied(to: full))
        #expect(removed["/x/1/a"] == nil)
        #expect(removed["/x/9/a"] == "kept", "row 10 is not row 1; it moves up one")
    }

    @Test func aCraftedFormWithoutTheListOrGroupLeavesThemAlone() throws {
        let document = try Self.document()
        let saved = try Self.consent.applying(FormFields([("/consent/review/title/en", "Review")]), to: document)
        #expect(saved[pointer: JSONPointer("/consent/visualScreens")!] == document[pointer: JSONPointer("/consent/visualScreens")!])
        #expect(saved[pointer: JSONPointer("/consent/sharing")!] == document[pointer: JSONPointer("/consent/sharing")!])
    }

    @Test func anOptionalPartIsLeftOutWhenItsCheckboxIsNot() throws {
        let document = try Self.document()
        #expect(document[pointer: JSONPointer("/consent/sharing")!] != nil)
        var form = Self.consent.values(in: document)
        form = FormFields(form.pairs.filter { $0.name != "/consent/sharing#on" })
        let saved = try Self.consent.applying(form, to: document)
        #expect(saved[pointer: JSONPointer("/consent/sharing")!] == nil)
        #expect(saved[pointer: JSONPointer("/consent/comprehension")!] == document[pointer: JSONPointer("/consent/comprehension")!])
    }

    @Test func aProblemInARowFindsItsField() throws {
        let document = try Self.document()
        let form = Self.consent.values(in: document)
        let found = try #require(Self.consent.field(holding: JSONPointer("/consent/comprehension/questions/0/choices/1/value")!, form: form))
        #expect(found.name == "/consent/comprehension/questions/0/choices/1/value")
        #expect(found.0.label == "Value")
    }
}
