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
        try JSONValue.parse(Array(try Data(contentsOf: exampleURL)))
    }

    static func study(_ json: JSONValue) throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: Data(json.serialized().utf8))
    }

    static let apps = [AppDefinition(appId: "SLEEPAPP", orgId: "ORG", name: "Sleep", kind: .standalone)]

    @Test func savingEveryUntouchedPageOfTheExampleChangesNothing() throws {
        let document = try Self.example()
        let sections = StudySection.all(apps: Self.apps)
        #expect(sections.map(\.slug) == ["basics", "settings"])
        for section in sections {
            let saved = try section.applying(section.values(in: document), to: document)
            #expect(try Self.study(saved) == Self.study(document), "page \(section.slug)")
        }
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
        #expect(saved[pointer: JSONPointer("/tagline")!] == .string("One line"))
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
