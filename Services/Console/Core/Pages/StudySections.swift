import Foundation
import JSONText
import StudyModels

extension StudySection {
    /// The builder's pages, in the order of the original portal's menu. `apps` are the choices
    /// for the study's app.
    package static func all(apps: [AppDefinition]) -> [StudySection] {
        [
            basics(apps: apps), settings, overview, eligibility, consent, activities, participantProperties, resources, notifications,
            dashboard,
        ]
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
                FormField("/name", "Title", .localized(long: false), help: "The short title the app's study list shows."),
                FormField(
                    "/fullName", "Full name", .localized(long: false),
                    help: "The descriptive name, as on the protocol (150 characters at most). For the team: the app does not show it."),
                FormField("/category", "Category", .localized(long: false), help: "For example Wellness, Chronic condition."),
                FormField("/sponsor", "Sponsor", .localized(long: false)),
                FormField("/tagline", "Tagline", .localized(long: false), help: "One line under the title in the study list."),
                FormField("/description", "Description", .localized(long: true)),
                FormField("/website", "Website", help: "https://…"),
                FormField("/supportEmail", "Support e-mail", help: "The address participants write to about the study."),
                FormField(
                    "/estimatedDuration/value", "Estimated duration", .number,
                    help: "How long a participant takes part, in the unit below (1 to 999)."),
                FormField(
                    "/estimatedDuration/unit", "Unit of the estimated duration",
                    .choice(StudyDuration.Unit.allCases.map { .init($0.rawValue, $0.rawValue.capitalized) }), absent: .string("weeks")),
                FormField(
                    "/dataPartners", "Data partners", .lines,
                    help: "The organisations the study's data is shared with, one per line.", absent: .array([])),
                FormField(
                    "/logo", "Thumbnail image URL",
                    help: "The image beside the study in the list: an image uploaded under Images and PDFs, or any https:// address."
                ).offeringImages(),
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

// The sections made of lists: the original portal's overview, eligibility, consent, participant
// properties, resources, notifications and dashboard pages.
extension StudySection {
    static func text(_ pointer: String, _ label: String, help: String? = nil) -> FormElement {
        .field(FormField(pointer, label, .localized(long: false), help: help))
    }

    static func longText(_ pointer: String, _ label: String, help: String? = nil) -> FormElement {
        .field(FormField(pointer, label, .localized(long: true), help: help))
    }

    static func plain(_ pointer: String, _ label: String, help: String? = nil) -> FormElement {
        .field(FormField(pointer, label, help: help))
    }

    /// A calendar date, a time of day or both, in the browser's own inputs.
    static func date(_ pointer: String, _ label: String, help: String? = nil) -> FormElement {
        .field(FormField(pointer, label, .date, help: help))
    }

    static func time(_ pointer: String, _ label: String, help: String? = nil, zone: FormField.Zone = .study) -> FormElement {
        .field(FormField(pointer, label, .time, help: help).inZone(zone))
    }

    static func dateTime(_ pointer: String, _ label: String, help: String? = nil, zone: FormField.Zone = .study) -> FormElement {
        .field(FormField(pointer, label, .dateTime, help: help).inZone(zone))
    }

    /// One of the study's activities, chosen from their list.
    static func activity(_ pointer: String, _ label: String, none: String = "Choose…") -> FormElement {
        .field(FormField(pointer, label, .reference(.activityId, none: none)))
    }

    /// A date the study's schedules may be anchored to: enrollment, a date answer, or a date
    /// participant property.
    /// The fields of the date chosen are the only ones shown, and the only ones kept.
    static func anchor(_ pointer: String) -> FormElement {
        .group(FormGroup(
            pointer, "Anchor", toggle: "Count the days from a date of each participant's own (their enrollment, an answer or a property)",
            [
                .variant(FormVariant("/source", "The date", clearsOtherCases: true, [
                    .init("enrollmentDate", "Their enrollment"),
                    .init("activityResponse", "Their answer to a date question", [
                        activity("/activityId", "Activity"),
                        plain("/key", "Question key"),
                        plain("/formKey", "Form step key (when the question is in a form)"),
                    ]),
                    .init("participantProperty", "A date property of theirs", [
                        .field(FormField("/propertyKey", "Property", .reference(.anchorProperty, none: "Choose…"),
                                         help: "Date properties marked as schedule anchors, on the Participant properties page.")),
                    ]),
                ])),
            ]))
    }

    package static let overview = StudySection(
        slug: "overview", title: "Overview",
        intro: "The pages a participant swipes through before joining. Only the first page may have a video.",
        elements: [
            .list(FormList("/overview", "Overview pages", item: "Page", [
                text("/title", "Title"), longText("/text", "Text"),
                .field(FormField("/image", "Image URL", help: "An image uploaded under Images and PDFs, or any https:// address.").offeringImages()), plain("/videoUrl", "Video URL (first page only)"),
            ]))
        ])

    package static let eligibility = StudySection(
        slug: "eligibility", title: "Eligibility",
        intro: "Who may join: an enrollment token, a test of yes/no questions, or both. The type cannot change once the study has launched.",
        elements: [
            .field(FormField(
                "/eligibility/type", "How eligibility is decided",
                .choice([.init("token", "Enrollment token"), .init("test", "Eligibility test"), .init("combined", "Token, then test")]))),
            text("/eligibility/tokenTitle", "Token screen title"),
            longText("/eligibility/instructionText", "Instructions"),
            longText("/eligibility/failureText", "Shown when the test is not passed"),
            .list(FormList("/eligibility/questions", "Test questions", item: "Question",
                           help: "Each question is answered yes or no; the answer that qualifies passes it.", [
                plain("/key", "Key", help: "Unique in the test: letters, digits, _ and -."),
                text("/text", "Question"),
                .field(FormField("/passingAnswer", "The answer that qualifies", .yesNo(yes: "Yes", no: "No"))),
            ])),
        ])

    static let consentKinds: [FormField.Option] = [
        .init("overview", "Overview"), .init("dataGathering", "Data gathering"), .init("privacy", "Privacy"),
        .init("dataUse", "Data use"), .init("timeCommitment", "Time commitment"), .init("studySurvey", "Study survey"),
        .init("studyTasks", "Study tasks"), .init("withdrawing", "Withdrawing"), .init("custom", "Custom"),
    ]

    package static let consent = StudySection(
        slug: "consent", title: "Consent",
        intro: "The consent a participant reads and signs: its sections, a comprehension test, data sharing, and the document they sign.",
        elements: [
            .list(FormList("/consent/visualScreens", "Sections", item: "Section", newItem: .object(["type": .string("custom")]), [
                .field(FormField("/type", "Kind", .choice(consentKinds))),
                text("/title", "Title"),
                longText("/text", "Summary on the screen"),
                longText("/description", "Learn more (also in the signed document)"),
                .field(FormField("/visualStep", "Shown as a screen (unchecked: in the document only)", .checkbox, absent: .bool(true))),
            ])),
            .group(FormGroup("/consent/comprehension", "Comprehension test", toggle: "Test understanding before signing", [
                .field(FormField("/passScore", "Correct answers needed to pass", .number)),
                .list(FormList("/questions", "Questions", item: "Question", newItem: .object(["choices": .array([]), "correctAnswers": .array([])]), [
                    plain("/key", "Key"),
                    text("/text", "Question"),
                    .list(FormList(
                        "/choices", "Choices", item: "Choice", help: "Tick the correct answers.",
                        mark: .init("Correct answer", member: "/correctAnswers", value: "/value"),
                        [text("/text", "Text"), plain("/value", "Value")])),
                    .field(FormField("/evaluation", "Passes when", .choice([.init("any", "any correct choice is chosen"), .init("all", "all correct choices are chosen")]))),
                ])),
            ])),
            .group(FormGroup("/consent/sharing", "Data sharing", toggle: "Ask whether data may be shared with others", [
                text("/title", "Title"), longText("/text", "Text"),
                text("/shortDesc", "Short description of who receives it"), longText("/longDesc", "Long description"),
                longText("/learnMore", "Learn more"),
                .field(FormField("/allowWithoutSharing", "A participant may join without sharing", .checkbox)),
            ])),
            .field(FormField("/consent/review/type", "The signed document", .choice([
                .init("sections", "Built from the sections"), .init("html", "A document of its own (HTML)"),
            ]), absent: .string("sections"))),
            longText("/consent/review/html", "The document's HTML (for a document of its own)"),
            text("/consent/review/title", "Review screen title"),
            text("/consent/review/signatureTitle", "Signature title"),
            longText("/consent/review/reasonForConsent", "Reason for consent"),
            .field(FormField("/consent/review/consentByLAR", "A legally authorised representative may consent", .checkbox)),
            .field(FormField("/consent/review/additionalSignature", "Extra signature lines", .checkbox)),
            .list(FormList("/consent/review/signatures", "Signature lines", item: "Line", newItem: .string(""), [text("", "Whose signature")])),
        ])

    package static let participantProperties = StudySection(
        slug: "properties", title: "Participant properties",
        intro: "Values kept for each participant, set before or after enrollment; a date property can anchor schedules.",
        elements: [
            .list(FormList("/participantProperties", "Properties", item: "Property", [
                plain("/key", "Key"), text("/name", "Name"),
                .field(FormField("/timing", "Set", .choice([.init("preEnrollment", "Before enrollment"), .init("postEnrollment", "After enrollment")]))),
                .field(FormField("/dataType", "Type", .choice(["string", "integer", "decimal", "date", "time", "boolean"].map { .init($0, $0) }))),
                .field(FormField("/useAsAnchor", "Schedules may count days from it (a date)", .checkbox)),
                plain("/dataSource", "Data source"),
                .field(FormField("/refresh", "Refreshed on every enrollment", .checkbox)),
            ]))
        ])

    package static let resources = StudySection(
        slug: "resources", title: "Resources",
        intro: "Documents participants can read in the app: text or a PDF, always or for a period.",
        elements: [
            .list(FormList("/resources", "Resources", item: "Resource", newItem: .object(["type": .string("html")]), [
                plain("/resourceId", "Id"), text("/title", "Title"),
                // Both kinds keep their content in `/content`, per language: text, or the PDF's
                // address (a PDF per language).
                .variant(FormVariant("/type", "Kind", [
                    .init("html", "Text (HTML)", [longText("/content", "Text")]),
                    .init("pdf", "PDF", [
                        .field(
                            FormField(
                                "/content", "The PDF's address", .localized(long: false),
                                help: "A PDF uploaded under Images and PDFs, or any https:// address."
                            ).offeringPDFs())
                    ]),
                ])),
                .group(FormGroup("/availability", "Availability", toggle: "Available for a period only", [
                    date("/startDate", "From"), date("/endDate", "Until"),
                    .field(FormField("/startDays", "From day (after the anchor)", .number)),
                    .field(FormField("/endDays", "Until day (after the anchor)", .number)),
                    time("/time", "At", zone: .studyUnlessAnchored),
                    anchor("/anchor"),
                ])),
                text("/notificationText", "Notification when it becomes available"),
                .field(FormField("/studyProtocol", "This is the study protocol", .checkbox)),
            ]))
        ])

    package static let notifications = StudySection(
        slug: "notifications", title: "Notifications",
        intro: "Messages to participants: when the study launches, at a time, or days after a participant's own date.",
        elements: [
            .list(FormList("/notifications", "Notifications", item: "Notification",
                           newItem: .object(["subtype": .string("Announcement"), "timing": .string("immediate")]), [
                plain("/notificationId", "Id"),
                .field(FormField("/subtype", "About", .choice([
                    .init("Announcement", "An announcement"), .init("Activity", "An activity"), .init("Resource", "A resource"),
                    .init("studyEvent", "The study"),
                ]))),
                text("/title", "Title"), longText("/text", "Text"),
                activity("/activityId", "Activity (about an activity)", none: "None"),
                plain("/resourceId", "Resource id (about a resource)"),
                .variant(FormVariant("/timing", "Sent", clearsOtherCases: true, [
                    .init("immediate", "When published"),
                    .init("scheduled", "At a time", [dateTime("/at", "At")]),
                    .init("anchorRelative", "Days after a participant's date", [
                        anchor("/anchor"),
                        .field(FormField("/anchorDays", "Days after the anchor", .number)),
                        time("/time", "At", zone: .participant),
                    ]),
                ])),
            ]))
        ])

    package static let dashboard = StudySection(
        slug: "dashboard", title: "Dashboard",
        intro: "What participants see of their own answers: statistics and charts of numeric questions and task results.",
        elements: [
            .list(FormList("/dashboard/statistics", "Statistics", item: "Statistic", [
                plain("/title", "Title"), text("/displayName", "Shown as"), plain("/statType", "Kind"), text("/unit", "Unit"),
                .field(FormField("/calculation", "Calculation", .choice(Statistic.Calculation.allCases.map { .init($0.rawValue, $0.rawValue) }))),
                plain("/dataSource/activityId", "Activity"), plain("/dataSource/key", "Question key"),
                plain("/dataSource/formKey", "Form step key"),
            ])),
            .list(FormList("/dashboard/charts", "Charts", item: "Chart", [
                plain("/title", "Title"), text("/displayName", "Shown as"),
                .field(FormField("/timeRangeType", "Over", .choice(Chart.TimeRange.allCases.map { .init($0.rawValue, $0.rawValue.replacingOccurrences(of: "_", with: " ")) }))),
                .field(FormField("/scrollable", "Scrollable", .checkbox)),
                plain("/dataSource/activityId", "Activity"), plain("/dataSource/key", "Question key"),
                plain("/dataSource/formKey", "Form step key"),
            ])),
        ])
}
