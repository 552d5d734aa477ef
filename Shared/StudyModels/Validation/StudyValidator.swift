import Foundation

/// One problem in a document, located by a JSON Pointer (RFC 6901). The admin API sends these
/// in its error body's `problems`, and as `warnings` beside a saved document.
public struct ValidationProblem: Codable, Sendable, Equatable {
    public var pointer: String
    public var message: String

    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }
}

/// Checks a study document and reports every problem at once, each with a JSON Pointer to
/// where it is, so a researcher can fix a whole document in one pass.
public struct StudyValidator {
    private var problems: [ValidationProblem] = []
    private var warnings: [ValidationProblem] = []
    /// What a draft may still lack while it is being built, page by page, but a version that
    /// participants see must have (a consent with something to consent to).
    private var unfinished: [ValidationProblem] = []
    private let document: StudyDocument

    /// What keeps `document` from being published: its problems and what it has not finished.
    public static func validate(_ document: StudyDocument) -> [ValidationProblem] {
        let review = review(document)
        return review.problems + review.unfinished
    }

    /// Problems (they keep a draft from being saved), what is unfinished (a draft saves, a version
    /// is not frozen), and warnings about content that is incomplete (a question without choices,
    /// an activity without steps) but that the original servers accepted; warnings never block.
    public static func review(
        _ document: StudyDocument
    ) -> (problems: [ValidationProblem], warnings: [ValidationProblem], unfinished: [ValidationProblem]) {
        var validator = StudyValidator(document: document)
        validator.run()
        return (validator.problems, validator.warnings, validator.unfinished)
    }

    private init(document: StudyDocument) {
        self.document = document
    }

    private mutating func problem(_ pointer: String, _ message: String) {
        problems.append(ValidationProblem(pointer: pointer, message: message))
    }

    private mutating func run() {
        checkStudy()
        checkEligibility()
        checkConsent()
        for (index, property) in document.participantProperties.enumerated() {
            checkProperty(property, at: "/participantProperties/\(index)")
        }
        // Property keys name the response service's property columns, matched whatever their case.
        checkDuplicates(document.participantProperties.map(\.key), at: "/participantProperties", field: "key", ignoringCase: true)
        // Activity ids name the study's response tables, whose names the response service and
        // LabKey match case-insensitively: two ids that differ only in case would share a table.
        checkDuplicates(document.activities.map(\.activityId), at: "/activities", field: "activityId", ignoringCase: true)
        if document.activities.count > DocumentBounds.maxActivities {
            problem("/activities", "at most \(DocumentBounds.maxActivities) activities in a study; this has \(document.activities.count)")
        }
        for (index, activity) in document.activities.enumerated() {
            ActivityChecks(document: document, activity: activity, pointer: "/activities/\(index)")
                .run(into: &problems, warnings: &warnings)
            checkText(activity.title, at: "/activities/\(index)/title", singleLine: true)
        }
        checkResources()
        checkNotifications()
        checkDashboard()
        checkArms()
        warnings += ContentWarnings.of(document)
    }

    /// Arms have distinct names, and an activity for one arm names one of them.
    private mutating func checkArms() {
        let names = document.arms?.names ?? []
        if document.arms != nil, names.isEmpty { problem("/arms/names", "name at least one arm, or leave arms out") }
        for (index, name) in names.enumerated() where name.isEmpty || name.unicodeScalars.count > 64 {
            problem("/arms/names/\(index)", "an arm's name is 1 to 64 characters")
        }
        checkDuplicates(names, at: "/arms/names", field: nil)
        for (index, activity) in document.activities.enumerated() {
            if document.source?.format == .schema, activity.activityId.uppercased() == StudySource.schemaLogList.uppercased() {
                problem("/activities/\(index)/activityId", "\(StudySource.schemaLogList) is where a schema study's page events are kept")
            }
            if let reserved = ResponseLists.reserved.first(where: { $0.uppercased() == activity.activityId.uppercased() }) {
                problem("/activities/\(index)/activityId", "\(reserved) is a table the response service keeps for every study")
            }
            if let arm = activity.arm, !names.contains(arm) {
                problem("/activities/\(index)/arm", "\"\(arm)\" is not one of the study's arms")
            }
        }
    }

    // MARK: - Study

    private mutating func checkStudy() {
        if !Identifiers.isValid(document.studyId) {
            problem("/studyId", Identifiers.rule)
        }
        if !Identifiers.isValid(document.appId) {
            problem("/appId", Identifiers.rule)
        }
        if TimeZone(identifier: document.timeZone) == nil {
            problem("/timeZone", "\"\(document.timeZone)\" is not an IANA time zone (for example America/New_York)")
        }
        if !document.languages.contains(LocalizedText.defaultLanguage) {
            problem("/languages", "must include \"en\", the fallback language")
        }
        for (index, language) in document.languages.enumerated()
        where !(2...3).contains(language.count) || !language.allSatisfy({ $0.isASCII && $0.isLowercase }) {
            problem("/languages/\(index)", "\"\(language)\" is not a lower-case ISO 639 language code")
        }
        checkDuplicates(document.languages, at: "/languages", field: nil)
        if document.platforms.isEmpty {
            problem("/platforms", "must name at least one of ios, android")
        }
        checkText(document.name, at: "/name", singleLine: true)
        for (index, page) in document.overview.enumerated() {
            checkText(page.title, at: "/overview/\(index)/title", singleLine: true)
            checkText(page.text, at: "/overview/\(index)/text")
            if page.videoUrl != nil, index > 0 {
                problem("/overview/\(index)/videoUrl", "only the first overview page may have a video")
            }
            if let url = page.videoUrl, !Self.isWebURL(url) {
                problem("/overview/\(index)/videoUrl", "must be an http:// or https:// URL")
            }
        }
        if let website = document.website, !Self.isWebURL(website) {
            problem("/website", "must be an http:// or https:// URL")
        }
        checkBasicRecords()
        if let label = document.versionLabel, !StudyActivity.isValidVersionLabel(label) {
            problem("/versionLabel", StudyActivity.versionLabelRule)
        }
        if let label = document.consent.versionLabel, !StudyActivity.isValidVersionLabel(label) {
            problem("/consent/versionLabel", StudyActivity.versionLabelRule)
        }
    }

    /// What the team records of the study beside what the apps list (WCP's basic information).
    private mutating func checkBasicRecords() {
        checkText(document.fullName, at: "/fullName", singleLine: true)
        for (language, value) in (document.fullName?.translations ?? [:]).sorted(by: { $0.key < $1.key })
        where value.unicodeScalars.count > DocumentBounds.fullName {
            problem("/fullName/\(JSONPointer.escape(language))", "is at most \(DocumentBounds.fullName) characters")
        }
        if let address = document.supportEmail,
            !EmailAddress.isPlausible(address) || address.unicodeScalars.count > DocumentBounds.supportEmail
        {
            problem("/supportEmail", "must be an e-mail address of at most \(DocumentBounds.supportEmail) characters")
        }
        if let duration = document.estimatedDuration, !StudyDuration.values.contains(duration.value) {
            problem("/estimatedDuration/value", "must be \(StudyDuration.values.lowerBound) to \(StudyDuration.values.upperBound)")
        }
        let partners = document.dataPartners ?? []
        if partners.count > DocumentBounds.dataPartners {
            problem("/dataPartners", "at most \(DocumentBounds.dataPartners) data partners")
        }
        for (index, partner) in partners.enumerated()
        where partner.unicodeScalars.count > DocumentBounds.dataPartnerName || !TextRules.isSingleLine(partner)
            || partner.trimmingCharacters(in: .whitespaces).isEmpty
        {
            problem("/dataPartners/\(index)", "a data partner is one line of 1 to \(DocumentBounds.dataPartnerName) characters")
        }
        checkDuplicates(partners, at: "/dataPartners", field: nil)
    }

    private mutating func checkEligibility() {
        let eligibility = document.eligibility
        if eligibility.type != .token, eligibility.questions.isEmpty {
            problem("/eligibility/questions", "a \(eligibility.type.rawValue) eligibility needs at least one question")
        }
        if eligibility.type == .token, !eligibility.questions.isEmpty {
            problem("/eligibility/questions", "eligibility by token asks no questions; choose token, then test, to ask them too")
        }
        checkDuplicates(eligibility.questions.map(\.key), at: "/eligibility/questions", field: "key")
        for (index, question) in eligibility.questions.enumerated() {
            checkText(question.text, at: "/eligibility/questions/\(index)/text")
        }
    }

    private mutating func checkConsent() {
        let consent = document.consent
        for (index, screen) in consent.visualScreens.enumerated() {
            checkText(screen.title, at: "/consent/visualScreens/\(index)/title", singleLine: true)
            checkText(screen.text, at: "/consent/visualScreens/\(index)/text")
        }
        if let comprehension = consent.comprehension {
            let pointer = "/consent/comprehension"
            if comprehension.questions.isEmpty {
                problem("\(pointer)/questions", "a comprehension test needs at least one question")
            }
            if comprehension.passScore < 1 || comprehension.passScore > comprehension.questions.count {
                problem(
                    "\(pointer)/passScore",
                    "must be between 1 and the number of questions (\(comprehension.questions.count))")
            }
            checkDuplicates(comprehension.questions.map(\.key), at: "\(pointer)/questions", field: "key")
            for (index, question) in comprehension.questions.enumerated() {
                let at = "\(pointer)/questions/\(index)"
                checkText(question.text, at: "\(at)/text")
                let values = question.choices.map { $0.value ?? "" }
                checkChoiceValues(values, at: "\(at)/choices")
                if question.correctAnswers.isEmpty {
                    problem("\(at)/correctAnswers", "names no correct answer")
                }
                for (answerIndex, answer) in question.correctAnswers.enumerated() where !values.contains(answer) {
                    problem("\(at)/correctAnswers/\(answerIndex)", "\"\(answer)\" is not the value of a choice")
                }
            }
        }
        if consent.review.type == .html, consent.review.html == nil {
            unfinished.append(ValidationProblem(
                pointer: "/consent/review/html", message: "an html review needs the consent document's HTML before publishing"))
        }
        if consent.review.type == .sections, consent.visualScreens.isEmpty {
            unfinished.append(ValidationProblem(
                pointer: "/consent/visualScreens",
                message: "a sections review is built from the visual screens; add at least one before publishing"))
        }
    }

    private mutating func checkProperty(_ property: ParticipantProperty, at pointer: String) {
        if !Identifiers.isValid(property.key) { problem("\(pointer)/key", Identifiers.rule) }
        if property.useAsAnchor == true, property.dataType != .date {
            problem("\(pointer)/useAsAnchor", "only a date property can be an anchor")
        }
    }

    // MARK: - Resources, notifications, dashboard

    private mutating func checkResources() {
        checkDuplicates(document.resources.map(\.resourceId), at: "/resources", field: "resourceId")
        for (index, resource) in document.resources.enumerated() {
            let pointer = "/resources/\(index)"
            checkText(resource.title, at: "\(pointer)/title", singleLine: true)
            if resource.type == .pdf {
                for (language, url) in resource.content.translations where !Self.isWebURL(url) {
                    problem("\(pointer)/content", "a pdf resource's content must be an https:// URL (\(language))")
                }
            }
            guard let availability = resource.availability else { continue }
            let at = "\(pointer)/availability"
            if let anchor = availability.anchor {
                AnchorCheck.run(anchor, in: document, at: "\(at)/anchor", into: &problems)
                if availability.startDays == nil { problem("\(at)/startDays", "a window counted from a participant's date needs the day it starts") }
                if let start = availability.startDays, let end = availability.endDays, end < start {
                    problem("\(at)/endDays", "ends before it starts (day \(end) comes before day \(start))")
                }
                let days = DocumentBounds.anchorDays
                for (name, value) in [("startDays", availability.startDays), ("endDays", availability.endDays)] {
                    if let value, !days.contains(value) { problem("\(at)/\(name)", "must be \(days.lowerBound) to \(days.upperBound) days") }
                }
            } else {
                checkDateWindow(start: availability.startDate, end: availability.endDate, at: at, requireStart: true)
            }
            if let time = availability.time, LocalTimes.time(time) == nil {
                problem("\(at)/time", TimeWords.mustBeATime)
            }
        }
    }

    private mutating func checkNotifications() {
        checkDuplicates(document.notifications.map(\.notificationId), at: "/notifications", field: "notificationId")
        for (index, notification) in document.notifications.enumerated() {
            let pointer = "/notifications/\(index)"
            checkText(notification.text, at: "\(pointer)/text")
            switch notification.subtype {
            case .activity:
                if notification.activityId.map({ id in !document.activities.contains { $0.activityId == id } }) ?? true {
                    problem("\(pointer)/activityId", "must name an activity of this study")
                }
            case .resource:
                if notification.resourceId.map({ id in !document.resources.contains { $0.resourceId == id } }) ?? true {
                    problem("\(pointer)/resourceId", "must name a resource of this study")
                }
            case .announcement, .studyEvent:
                break
            }
            switch notification.timing {
            case .immediate:
                break
            case .scheduled:
                if notification.at.flatMap(LocalTimes.dateTime) == nil {
                    problem("\(pointer)/at", "a scheduled notification needs a date and time, such as 2027-01-31T08:30, in the study's time zone")
                }
            case .anchorRelative:
                if let anchor = notification.anchor {
                    AnchorCheck.run(anchor, in: document, at: "\(pointer)/anchor", into: &problems)
                } else {
                    problem("\(pointer)/anchor", "an anchor-relative notification needs an anchor")
                }
                if let days = notification.anchorDays {
                    if !DocumentBounds.anchorDays.contains(days) {
                        problem("\(pointer)/anchorDays", "must be \(DocumentBounds.anchorDays.lowerBound) to \(DocumentBounds.anchorDays.upperBound) days")
                    }
                } else {
                    problem("\(pointer)/anchorDays", "is required")
                }
                if notification.time.flatMap(LocalTimes.time) == nil { problem("\(pointer)/time", TimeWords.mustBeATime) }
            }
        }
    }

    private mutating func checkDashboard() {
        checkDuplicates(document.dashboard.statistics.map(\.title), at: "/dashboard/statistics", field: "title")
        checkDuplicates(document.dashboard.charts.map(\.title), at: "/dashboard/charts", field: "title")
        for (index, statistic) in document.dashboard.statistics.enumerated() {
            checkSource(statistic.dataSource, at: "/dashboard/statistics/\(index)/dataSource", use: "a statistic")
        }
        for (index, chart) in document.dashboard.charts.enumerated() {
            checkSource(chart.dataSource, at: "/dashboard/charts/\(index)/dataSource", use: "a chart")
        }
    }

    /// A dashboard item needs numbers: a numeric question, or a numeric result of an active task.
    private mutating func checkSource(_ source: DashboardSource, at pointer: String, use: String) {
        guard let activity = document.activities.first(where: { $0.activityId == source.activityId }) else {
            problem("\(pointer)/activityId", "\"\(source.activityId)\" is not an activity of this study")
            return
        }
        if let task = activity.steps.first(where: { $0.type == .task })?.taskType {
            let results = ActivityChecks.numericTaskResults[task] ?? []
            if !results.contains(source.key) {
                problem(
                    "\(pointer)/key",
                    "\(use) needs a numeric result of \(task.rawValue): one of \(results.joined(separator: ", "))")
            }
            return
        }
        guard let question = activity.question(key: source.key, formKey: source.formKey) else {
            problem("\(pointer)/key", "\"\(source.key)\" is not a question of \(source.activityId)")
            return
        }
        if question.responseType?.isNumeric != true {
            problem("\(pointer)/key", "\(use) needs a numeric question; \"\(source.key)\" is \(ResponseType.words(question.resultType))")
        }
    }

    // MARK: - Shared checks

    private mutating func checkDuplicates(_ values: [String], at pointer: String, field: String?, ignoringCase: Bool = false) {
        var seen: Set<String> = []
        for (index, value) in values.enumerated() {
            if !seen.insert(ignoringCase ? value.uppercased() : value).inserted {
                let location = field.map { "\(pointer)/\(index)/\($0)" } ?? "\(pointer)/\(index)"
                problem(location, ignoringCase
                    ? "\"\(value)\" is used more than once (ids are compared whatever their case)"
                    : "\"\(value)\" is used more than once")
            }
        }
    }

    private mutating func checkChoiceValues(_ values: [String], at pointer: String) {
        var seen: Set<String> = []
        for (index, value) in values.enumerated() {
            if value.isEmpty {
                problem("\(pointer)/\(index)/value", "a choice needs a value")
            } else if !seen.insert(value).inserted {
                problem("\(pointer)/\(index)/value", "choice value \"\(value)\" is repeated")
            }
        }
    }

    private mutating func checkDateWindow(start: String?, end: String?, at pointer: String, requireStart: Bool) {
        let startValue = start.flatMap(LocalTimes.sortableDate)
        if let start, startValue == nil { problem("\(pointer)/startDate", "\"\(start)\" \(TimeWords.isNotADate)") }
        if start == nil, requireStart { problem("\(pointer)/startDate", "is required") }
        if let end {
            if let endValue = LocalTimes.sortableDate(end) {
                if let startValue, endValue < startValue { problem("\(pointer)/endDate", "is before the start date") }
            } else {
                problem("\(pointer)/endDate", "\"\(end)\" \(TimeWords.isNotADate)")
            }
        }
    }

    /// Every text needs English, and translations only in the study's languages.
    /// `singleLine`: a name or title, which reaches mail subjects, page titles and list cells;
    /// it may hold no line break or other control character in any language.
    private mutating func checkText(_ text: LocalizedText?, at pointer: String, singleLine: Bool = false) {
        guard let text else { return }
        if singleLine {
            for (language, value) in text.translations.sorted(by: { $0.key < $1.key }) where !TextRules.isSingleLine(value) {
                problem("\(pointer)/\(JSONPointer.escape(language))", "must be one line, without control characters")
            }
        }
        if text.translations[LocalizedText.defaultLanguage] == nil {
            problem(pointer, "needs an English (\"en\") text, the fallback for every language")
        }
        for language in text.translations.keys.sorted() where !document.languages.contains(language) {
            problem("\(pointer)/\(JSONPointer.escape(language))", "\"\(language)\" is not one of the study's languages")
        }
    }

    public static func isWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return false }
        return ["http", "https"].contains(scheme) && url.host != nil
    }
}

/// Identifiers that become parts of URLs, keys and database names.
public enum Identifiers {
    public static let rule = "must be 1 to 64 letters, digits, '_' or '-', starting with a letter or digit"

    public static func isValid(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, (1...64).contains(text.count) else { return false }
        let allowed: (Unicode.Scalar) -> Bool = { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        return allowed(first) && text.unicodeScalars.allSatisfy { allowed($0) || $0 == "_" || $0 == "-" }
    }
}
