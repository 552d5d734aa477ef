import Foundation
import JSONText
import StudyModels

// The activities: a list page (ids, titles, kinds), and a page per activity for its steps and
// schedule, with every response type's and every active task's format fields.
extension StudySection {
    package static let activities = StudySection(
        slug: "activities", title: "Activities",
        intro: "Questionnaires and active tasks. Add one here, then open it for its steps and schedule.",
        elements: [
            .list(FormList(
                "/activities", "Activities", item: "Activity",
                newItem: .object([
                    "schedule": .object(["frequency": .string("oneTime"), "launchWithStudy": .bool(true), "studyLifetime": .bool(true)]),
                    "steps": .array([]),
                ]),
                rowPage: .init(path: "activities", member: "/activityId", what: "steps and schedule"),
                [
                    plain("/activityId", "Id", help: "Letters, digits, _ and -; it names the activity's table of answers."),
                    text("/title", "Title"),
                    .field(FormField("/type", "Kind", .choice([.init("questionnaire", "Questionnaire"), .init("task", "Active task")]))),
                ]))
        ])

    /// The page of the activity at `index` of the draft: its title, schedule and the list of its
    /// steps (key, title, kind), in order. Each saved step opens on a page of its own, as the
    /// original portal's questionnaire page listed its steps and edited each on its own page.
    ///
    /// A Sage-only activity (imported from a Sage assessment the MyStudies apps cannot run) has no
    /// steps of theirs to edit: its page keeps the title, version label and schedule.
    package static func activity(index: Int, activityId: String, sageOnly: Bool = false) -> StudySection {
        let common: [FormElement] = [
            text("/title", "Title"),
            // Saving the page, its schedule in sight, is choosing the schedule an import gave.
            .field(FormField("/placeholderSchedule", "", .cleared)),
            plain(
                "/versionLabel", "Version label",
                help: "Optional. The version the apps see and responses carry: a study moved from another deployment keeps its own (such as 3). Empty: numbered 1.0, 1.1, ... as the activity changes. A new label alone publishes the same design again."),
        ]
        if sageOnly {
            return StudySection(
                slug: "activities/\(activityId)", title: "Activity \(activityId)",
                intro: "When it is available. Its steps are the Sage assessment it was imported from: import a changed assessment to change them.",
                root: JSONPointer(tokens: ["activities", String(index)]), activityId: activityId, elements: common + [schedule, reminder])
        }
        return StudySection(
            slug: "activities/\(activityId)", title: "Activity \(activityId)",
            intro: "When it is available, and its steps in order. Add, remove and order steps here; open a step for its text, response format and branching.",
            root: JSONPointer(tokens: ["activities", String(index)]), activityId: activityId,
            elements: common + [
                .field(FormField("/branching", "The steps branch (choices lead to different next steps)", .checkbox)),
                schedule,
                reminder,
                .list(FormList(
                    "/steps", "Steps", item: "Step",
                    help: "A step's key is unique in the activity and names its answer's column. Open a step for its text, format and branching.",
                    newItem: .object(["type": .string("question"), "resultType": .string("")]),
                    rowPage: .init(
                        path: "activities/\(AdminAPIClient.segment(activityId))/steps", member: "/key",
                        what: "text, format and branching"),
                    table: true, stepSummary)),
            ])
    }

    /// The page of one step: the step at `stepIndex` of the activity at `index`, named by its key.
    package static func step(index: Int, activityId: String, stepIndex: Int, key: String) -> StudySection {
        let folder = "activities/\(AdminAPIClient.segment(activityId))/steps/"
        return StudySection(
            slug: "activities/\(activityId)/steps/\(key)", title: "Step \(key) of \(activityId)",
            intro: "What the step shows, how it is answered, and where its answers lead. The activity's page orders its steps.",
            root: JSONPointer(tokens: ["activities", String(index), "steps", String(stepIndex)]),
            namedBy: .init(folder: folder, member: JSONPointer(tokens: ["key"])), activityId: activityId,
            elements: stepElements)
    }

    /// The activity or step page that edits what `pointer` names in `draft`, if it lies in an
    /// activity (so a problem found on another page links to the page that fixes it).
    package static func activityPage(holding pointer: JSONPointer, in draft: JSONValue) -> StudySection? {
        let tokens = pointer.tokens
        guard tokens.count >= 2, tokens[0] == "activities", let index = Int(tokens[1]),
            case .array(let activities) = draft[pointer: JSONPointer(tokens: ["activities"])], activities.indices.contains(index),
            case .string(let activityId) = activities[index]["activityId"]
        else { return nil }
        if tokens.count >= 4, tokens[2] == "steps", let stepIndex = Int(tokens[3]),
            case .array(let steps) = activities[index]["steps"], steps.indices.contains(stepIndex),
            case .string(let key) = steps[stepIndex]["key"], !key.isEmpty
        {
            return step(index: index, activityId: activityId, stepIndex: stepIndex, key: key)
        }
        return activity(index: index, activityId: activityId, sageOnly: isSageOnly(activities[index]))
    }

    /// Whether an activity of the draft was imported from a Sage assessment the MyStudies apps
    /// cannot run (its reasons are listed in the draft).
    package static func isSageOnly(_ activity: JSONValue) -> Bool {
        !(activity["assessment"]?["sageOnly"]?.array ?? []).isEmpty
    }

    /// A step as the activity's page lists it: key, title and kind (with the response type or
    /// task chosen there, so a step added on that page is whole; its format waits for its page).
    static let stepSummary: [FormElement] = [
        plain("/key", "Key"),
        text("/title", "Title"),
        .variant(FormVariant("/type", "Kind of step", reset: "/resultType", resetValue: .string(""), [
            .init("instruction", "Instruction (text only)", [.field(FormField("/resultType", "", .fixed(.string(""))))]),
            .init("question", "Question", [.variant(responseTypes.choiceOnly)]),
            .init("form", "Form (several questions on one screen)", [.field(FormField("/resultType", "", .fixed(.string("grouped"))))]),
            .init("task", "Active task", [.variant(taskTypes.choiceOnly)]),
        ])),
    ]

    /// A step whole: what its page edits.
    static let stepElements: [FormElement] = [
        plain("/key", "Key", help: "Unique in the activity; it names the answer's column."),
        text("/title", "Title"),
        longText("/text", "Text"),
        .variant(FormVariant("/type", "Kind of step", reset: "/resultType", resetValue: .string(""), [
            .init("instruction", "Instruction (text only)", [.field(FormField("/resultType", "", .fixed(.string(""))))]),
            .init("question", "Question", [
                .field(FormField("/skippable", "May be skipped", .checkbox)),
                .variant(responseTypes),
                destinations,
            ]),
            .init("form", "Form (several questions on one screen)", [
                .field(FormField("/resultType", "", .fixed(.string("grouped")))),
                .field(FormField("/repeatable", "May be answered several times", .checkbox)),
                text("/repeatableText", "Label of the button that repeats it"),
                destinations,
                .list(FormList("/steps", "Questions of the form", item: "Question",
                               newItem: .object(["type": .string("question"), "resultType": .string("")]), [
                    plain("/key", "Key"), text("/title", "Title"), longText("/text", "Text"),
                    .field(FormField("/type", "", .fixed(.string("question")))),
                    .field(FormField("/skippable", "May be skipped", .checkbox)),
                    .variant(responseTypes),
                ])),
            ]),
            .init("task", "Active task", [.variant(taskTypes)]),
        ])),
    ]

    static func number(_ pointer: String, _ label: String, help: String? = nil) -> FormElement {
        .field(FormField(pointer, label, .number, help: help))
    }

    static func checkbox(_ pointer: String, _ label: String) -> FormElement {
        .field(FormField(pointer, label, .checkbox))
    }

    static func textChoices(_ withDetail: Bool) -> FormElement {
        var elements: [FormElement] = [text("/text", "Text"), plain("/value", "Value", help: "What is stored as the answer.")]
        if withDetail {
            elements += [
                text("/detail", "Detail"),
                checkbox("/exclusive", "Exclusive (choosing it clears the others)"),
                .group(FormGroup("/other", "Other", toggle: "Has a free-text “other” answer", [
                    text("/placeholder", "Placeholder"), checkbox("/isMandatory", "The text is required"),
                    checkbox("/textfieldReq", "Shows a text field"),
                ])),
            ]
        }
        return .list(FormList("/format/textChoices", "Choices", item: "Choice", elements))
    }

    static let scaleFields: [FormElement] = [
        number("/format/minValue", "Lowest value"), number("/format/maxValue", "Highest value"), number("/format/step", "Step"),
        number("/format/default", "Starting value"), checkbox("/format/vertical", "Vertical"),
        text("/format/minDesc", "Label of the lowest value"), text("/format/maxDesc", "Label of the highest value"),
        plain("/format/minImage", "Image of the lowest value"), plain("/format/maxImage", "Image of the highest value"),
    ]

    /// The 15 response types and their format fields (docs/study-document.md).
    static let responseTypes = FormVariant("/resultType", "Response type", reset: "/format", [
        .init("scale", "Scale (whole numbers)", scaleFields),
        .init("continuousScale", "Continuous scale", scaleFields + [number("/format/maxFractionDigits", "Decimals")]),
        .init("textScale", "Text scale", [textChoices(false), number("/format/default", "Starting choice (from 1)"), checkbox("/format/vertical", "Vertical")]),
        .init("valuePicker", "Value picker", [textChoices(false)]),
        .init("imageChoice", "Image choice", [
            .list(FormList("/format/imageChoices", "Images", item: "Image", [
                .field(FormField("/image", "Image (base64 or URL)").offeringImages()),
                .field(FormField("/selectedImage", "Image when selected").offeringImages()), text("/text", "Text"),
                plain("/value", "Value"),
            ]))
        ]),
        .init("textChoice", "Text choice", [
            .field(FormField("/format/selectionStyle", "Answers", .choice([.init("Single", "One choice"), .init("Multiple", "Several choices")]))),
            textChoices(true),
        ]),
        .init("boolean", "Yes or no"),
        .init("numeric", "Number", [
            .field(FormField("/format/style", "Kind", .choice([.init("Integer", "Whole number"), .init("Decimal", "Decimal")]))),
            text("/format/unit", "Unit"), number("/format/minValue", "Lowest"), number("/format/maxValue", "Highest"),
            text("/format/placeholder", "Placeholder"),
        ]),
        .init("timeOfDay", "Time of day"),
        .init("date", "Date", [
            .field(FormField("/format/style", "Kind", .choice([.init("Date", "Date"), .init("Date-Time", "Date and time")]))),
            .field(FormField("/format/dateRange", "Dates offered", .choice([
                .init("custom", "From the earliest to the latest below"), .init("untilCurrent", "Up to the moment it is answered"),
                .init("afterCurrent", "From a day after it is answered"),
            ]), help: "Up to the moment it is answered replaces the latest below; from a day after, the earliest.")),
            .field(FormField("/format/minDate", "Earliest", .appDateTime)), .field(FormField("/format/maxDate", "Latest", .appDateTime)),
            .field(FormField("/format/default", "Starting value", .appDateTime)),
        ]),
        .init("text", "Text", [
            number("/format/maxLength", "Longest (0: no limit)"), plain("/format/validationRegex", "Must match (regular expression)"),
            text("/format/invalidMessage", "Message when it does not match"), checkbox("/format/multipleLines", "Several lines"),
            text("/format/placeholder", "Placeholder"),
        ]),
        .init("email", "E-mail address", [text("/format/placeholder", "Placeholder")]),
        .init("timeInterval", "Time interval", [number("/format/default", "Starting value (seconds)"), number("/format/step", "Step (minutes)")]),
        .init("height", "Height", [
            .field(FormField("/format/measurementSystem", "Units", .choice([.init("Local", "The phone's"), .init("Metric", "Metric"), .init("US", "US")]))),
            text("/format/placeholder", "Placeholder"),
        ]),
        .init("location", "Location", [checkbox("/format/useCurrentLocation", "Start from the current location")]),
    ])

    /// The three active tasks and their parameters.
    static let taskTypes = FormVariant("/resultType", "Task", reset: "/format", [
        .init("fetalKickCounter", "Fetal kick counter (iOS and Android)", [
            number("/format/duration", "Duration (seconds)"), number("/format/kickCount", "Kicks to count"),
        ]),
        .init("towerOfHanoi", "Tower of Hanoi (iOS)", [number("/format/numberOfDisks", "Disks")]),
        .init("spatialSpanMemory", "Spatial span memory (iOS)", [
            number("/format/initialSpan", "First span"), number("/format/minimumSpan", "Shortest span"),
            number("/format/maximumSpan", "Longest span"), number("/format/playSpeed", "Play speed (seconds)"),
            number("/format/maximumTests", "Tests"), number("/format/maximumConsecutiveFailures", "Failures in a row that end it"),
            checkbox("/format/requireReversal", "Repeat in reverse order"), plain("/format/customTargetImage", "Target image"),
            plain("/format/customTargetPluralName", "Targets called"),
        ]),
    ])

    static let destinations = FormElement.list(FormList(
        "/destinations", "Branching", item: "Destination",
        help: "Where an answer leads: a choice value (true or false for yes/no), or a number compared with the operator. The one without a condition is the default. Steps added on the activity's page can be chosen once it is saved.",
        [
            plain("/condition", "When the answer is"),
            .field(FormField("/operator", "Compared with", .choice(Destination.Operator.allCases.map { .init($0.rawValue, $0.symbol) }))),
            .field(FormField("/destination", "Go to step", .reference(.stepKey, none: "The end of the activity"))),
        ]))

    /// The days of the week as the schedule counts them (1 is Sunday).
    static let weekdays: [FormField.Option] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        .enumerated().map { .init(String($0.offset + 1), $0.element) }

    /// The days of a schedule anchored to a participant's date, and the anchor itself.
    static let anchoredWindow: [FormElement] = [
        number("/schedule/startDays", "From day (anchored)"), number("/schedule/endDays", "Until day (anchored)"),
        anchor("/schedule/anchor"),
    ]

    /// A push when a run is due and not done, held back by quiet hours in the participant's zone.
    static let reminder = FormElement.group(FormGroup(
        "/reminder", "Reminder", toggle: "Push a reminder when a run is due and not done",
        help: "Sent by the server to participants who have notifications on, never after they withdraw. Times are the participant's own.",
        [
            number("/afterMinutes", "Minutes after the run opens"),
            number("/randomMinutes", "Spread over up to (minutes)"),
            time("/quietFrom", "Quiet hours from", zone: .participant), time("/quietUntil", "Quiet hours until", zone: .participant),
            number("/maxPerDay", "At most this many a day"),
            text("/message", "Message (the activity's title is its heading)"),
        ]))

    /// Every kind of schedule: one time, daily windows, weekly, monthly, custom runs, ongoing;
    /// absolute, or anchored to a participant's date.
    static let schedule = FormElement.variant(FormVariant("/schedule/frequency", "Schedule", reset: "/schedule", [
        .init("oneTime", "One time", [
            checkbox("/schedule/launchWithStudy", "From the launch"), date("/schedule/startDate", "Or from"),
            checkbox("/schedule/studyLifetime", "Until the study ends"),
            date("/schedule/endDate", "Or until", help: "Open to the end of that day (23:59:59), as the apps are told."),
            time("/schedule/time", "At", help: "When it opens.", zone: .studyUnlessAnchored),
        ] + anchoredWindow),
        .init("daily", "Daily", [
            date("/schedule/startDate", "From"), date("/schedule/endDate", "Until"),
            .field(FormField("/schedule/dailyTimes", "Times", .times, help: "Each window lasts until the next time, or until the schedule's timeout runs out.").inZone(.participant)),
        ] + anchoredWindow),
        .init("weekly", "Weekly", [
            date("/schedule/startDate", "From (on its weekday)"), time("/schedule/time", "At", zone: .studyUnlessAnchored),
            number("/schedule/repeatCount", "Weeks"), date("/schedule/endDate", "Or until"),
            .field(FormField(
                "/schedule/dayOfWeek", "Weekday (anchored)", .numberChoice(weekdays),
                help: "Served to the apps, which do not schedule by it: anchored runs start on the day the activity opens.")),
        ] + anchoredWindow),
        .init("monthly", "Monthly", [
            date("/schedule/startDate", "From (on its day of the month)"), time("/schedule/time", "At", zone: .studyUnlessAnchored),
            number("/schedule/repeatCount", "Months"), date("/schedule/endDate", "Or until"),
            number("/schedule/dateOfMonth", "Day of the month (anchored)"),
        ] + anchoredWindow),
        .init("manual", "Custom runs", [
            .list(FormList("/schedule/runs", "Runs", item: "Run", [
                dateTime("/start", "From"), dateTime("/end", "Until"),
            ])),
            .list(FormList("/schedule/anchorRuns", "Runs after the anchor", item: "Run", [
                number("/startDays", "From day"), number("/endDays", "Until day"), time("/time", "At", zone: .participant),
            ])),
            anchor("/schedule/anchor"),
        ]),
        .init("ongoing", "Ongoing (always available)"),
    ]))
}
