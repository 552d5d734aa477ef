import Crypto
import Foundation
import JSONText
import StudyModels

/// One page of the study builder: a part of the study document edited on its own, as the
/// original portal had a page per section. Saving a section reads the whole draft, puts the
/// section's fields into it, and saves the whole draft back; the admin API validates all of it.
package struct StudySection: Sendable {
    /// The page's URL segment: `/studies/{studyId}/{slug}`.
    package var slug: String
    package var title: String
    /// What the section is for, shown above the fields.
    package var intro: String
    package var fields: [FormField]

    /// The form values the document holds for this section's fields.
    package func values(in document: JSONValue) -> FormFields {
        FormFields(fields.flatMap { $0.values(in: document) })
    }

    /// A digest of what the document holds for this section. A page carries it from when it was
    /// drawn; a save whose section changed meanwhile (someone else saved it) is stopped, so
    /// nobody overwrites a colleague's change without seeing it.
    package func fingerprint(of document: JSONValue) -> String {
        var digest = SHA256()
        for (name, value) in values(in: document).pairs {
            digest.update(data: Data(name.utf8))
            digest.update(data: [0])
            digest.update(data: Data(value.utf8))
            digest.update(data: [1])
        }
        return digest.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The document with this section's fields as `form` says.
    package func applying(_ form: FormFields, to document: JSONValue) throws(JSONValue.PointerError) -> JSONValue {
        var document = document
        for field in fields { try field.apply(form, to: &document) }
        return document
    }
}

extension StudySection {
    /// The builder's pages, in the order of the original portal's menu. `apps` are the choices
    /// for the study's app.
    package static func all(apps: [AppDefinition]) -> [StudySection] {
        [basics(apps: apps), settings]
    }

    /// The first page of a new study: what cannot be left out.
    package static func newStudy(apps: [AppDefinition]) -> StudySection {
        StudySection(
            slug: "new", title: "New study", intro: "",
            fields: [
                FormField("/studyId", "Study id", help: "Letters, digits, _ and -; permanent, and unique whatever the case."),
                FormField("/appId", "App", .choice(apps.map { .init($0.appId, "\($0.name) (\($0.appId))") })),
                FormField("/name", "Title", .localized(long: false)),
                FormField(
                    "/timeZone", "Time zone", .choice(timeZones),
                    help: "Schedules are computed in this zone; it can be changed later."),
            ])
    }

    /// What a new study starts from before its first page is applied: an enrollment-token
    /// eligibility and an empty consent, which the builder's pages then fill in.
    package static let newStudySkeleton = JSONValue.object([
        "eligibility": .object(["type": .string("token")]),
        "consent": .object([:]),
    ])

    static let timeZones: [FormField.Option] = TimeZone.knownTimeZoneIdentifiers.sorted().map { .init($0, $0) }

    package static func basics(apps: [AppDefinition]) -> StudySection {
        StudySection(
            slug: "basics", title: "Basic information",
            intro: "How the study is listed in the app. The study id never changes; the app is fixed once a version is published.",
            fields: [
                FormField("/appId", "App", .choice(apps.map { .init($0.appId, "\($0.name) (\($0.appId))") }),
                          help: "The app the study appears in."),
                FormField("/name", "Title", .localized(long: false)),
                FormField("/category", "Category", .localized(long: false), help: "For example Wellness, Chronic condition."),
                FormField("/sponsor", "Sponsor", .localized(long: false)),
                FormField("/tagline", "Tagline", .localized(long: false), help: "One line under the title in the study list."),
                FormField("/description", "Description", .localized(long: true)),
                FormField("/website", "Website", help: "https://…"),
                FormField("/logo", "Thumbnail image URL", help: "The image beside the study in the list (https://…)."),
            ])
    }

    package static let settings = StudySection(
        slug: "settings", title: "Settings",
        intro: "Who can join, on which platforms, in which languages, and what happens when a participant leaves.",
        fields: [
            FormField(
                "/platforms", "Platforms", .choices([.init("ios", "iOS"), .init("android", "Android")]),
                absent: .array([.string("ios"), .string("android")])),
            FormField("/enrolling", "Enrolling: new participants may join", .checkbox, absent: .bool(true)),
            FormField("/rejoin/allowed", "A participant who left may join again", .checkbox, absent: .bool(true)),
            FormField("/rejoin/message", "Message when rejoining is not allowed", .localized(long: false)),
            FormField(
                "/withdrawal/type", "When a participant withdraws",
                .choice([
                    .init("no_action", "Keep their data"), .init("delete_data", "Delete their data"),
                    .init("ask_user", "Ask the participant"),
                ]), absent: .string("no_action")),
            FormField("/withdrawal/message", "Message shown on withdrawal", .localized(long: true)),
            FormField(
                "/timeZone", "Time zone", .choice(timeZones),
                help: "Every schedule's dates and times are in this zone."),
            FormField(
                "/languages", "Languages", .choices([.init("en", "English"), .init("es", "Spanish")]),
                help: "English is required. With Spanish, every text has a Spanish field beside it.",
                absent: .array([.string("en")])),
        ])
}
