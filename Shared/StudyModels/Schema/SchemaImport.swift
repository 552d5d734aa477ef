import Foundation
import JSONText

/// A schema protocol made into the study model (docs/schema-protocols.md, Import): each module an
/// activity with its schedule and arm, each question a step, the conditions the study's arms,
/// displayed graphs dashboard charts, and the protocol itself kept as the study's source, since
/// it is what the schema app downloads.
///
/// Problems are located in the protocol (JSON pointers into the uploaded body). What the study
/// model cannot hold is an error here rather than a silent loss: a module no participant can ever
/// be given (it schedules nothing, or its condition is none of the study's), and a question id
/// that cannot name a column.
public struct SchemaImport: Sendable {
    public var errors: [ValidationProblem] = []
    public var warnings: [ValidationProblem] = []
    /// `properties.study_id` as the protocol had it; POSTs from phones that enrolled with the
    /// original protocol still carry it.
    public var protocolStudyId: String?
    public var name: String?
    public var arms: StudyArms?
    /// One per module, in the protocol's order.
    public var activities: [StudyActivity] = []
    public var charts: [Chart] = []
    /// The study's information and ethics texts as consent screens, for a study made by the import.
    public var consent: Consent?
    public var source: StudySource?

    /// Checks and maps protocol text.
    public static func read(_ bytes: some Collection<UInt8>, assignment: SchemaConditions.Method = .block) -> SchemaImport {
        let check = SchemaProtocolCheck.check(text: bytes)
        var result = SchemaImport()
        result.errors = check.errors
        result.warnings = check.warnings
        guard check.errors.isEmpty, let normalized = check.normalized else { return result }
        result.map(normalized, assignment: assignment)
        return result
    }

    /// The activity id of each module: its `uuid` when that is a valid id no other module has
    /// taken, else `module-<index>`. The receiver finds a POST's activity with the same function.
    public static func activityIds(modules: [JSONValue]) -> [String] {
        var used: Set<String> = []
        var ids: [String?] = modules.map { module in
            guard let uuid = module["uuid"]?.string, Identifiers.isValid(uuid), used.insert(uuid.uppercased()).inserted else {
                return nil
            }
            return uuid
        }
        for index in ids.indices where ids[index] == nil {
            var id = "module-\(index)"
            while !used.insert(id.uppercased()).inserted { id = "module-\(index)-\(used.count)" }
            ids[index] = id
        }
        return ids.map { $0! }
    }

    /// Puts what the protocol describes into `document`: its name, activities, arms, the charts
    /// of its graphs (other charts stay) and its source. A study made by the import also takes
    /// its consent screens; an existing study keeps the consent it has, unless it has none.
    public func apply(to document: inout StudyDocument) {
        if let name { document.name = LocalizedText(name) }
        document.activities = activities
        document.arms = arms
        let previous = Set((document.source?.document["modules"]?.array ?? []).indices.map { "graph-\($0)" })
        document.dashboard.charts.removeAll { previous.contains($0.title) }
        document.dashboard.charts += charts
        if let consent, document.consent.visualScreens.isEmpty, document.consent.review.html == nil {
            document.consent = consent
        }
        document.source = source
    }

    // MARK: - Mapping

    private mutating func map(_ protocolDocument: JSONValue, assignment: SchemaConditions.Method) {
        let properties = protocolDocument["properties"]
        protocolStudyId = properties?["study_id"]?.string
        name = properties?["study_name"]?.nonEmptyString.map(Self.plainText)
        let conditions = properties?["conditions"]?.stringArray ?? []
        let names = conditions.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        arms = names.isEmpty ? nil : StudyArms(names: names, assignment: assignment)
        for (index, name) in names.enumerated() where name.isEmpty || name.unicodeScalars.count > 64 {
            error("/properties/conditions/\(index)", "a condition's name is 1 to 64 characters")
        }
        let modules = protocolDocument["modules"]?.array ?? []
        let ids = Self.activityIds(modules: modules)
        let idsByUUID = Dictionary(
            modules.enumerated().compactMap { index, module in module["uuid"]?.string.map { ($0, ids[index]) } },
            uniquingKeysWith: { first, _ in first })
        for (index, module) in modules.enumerated() {
            let pointer = "/modules/\(index)"
            if let uuid = module["uuid"]?.string, uuid != ids[index] {
                warn("\(pointer)/uuid", "cannot be an activity id (\(Identifiers.rule), unique); the activity is \(ids[index])")
            }
            activities.append(activity(module, id: ids[index], at: pointer, conditions: names, idsByUUID: idsByUUID))
            if let chart = chart(module["graph"], activity: activities[index], index: index, at: "\(pointer)/graph") {
                charts.append(chart)
            }
        }
        consent = Self.consent(properties)
        source = StudySource(format: .schema, document: protocolDocument)
    }

    private mutating func activity(
        _ module: JSONValue, id: String, at pointer: String, conditions: [String], idsByUUID: [String: String]
    ) -> StudyActivity {
        let condition = module["condition"]?.string
        var arm: String?
        switch condition {
        case "*"?: arm = nil
        case let name?:
            if conditions.contains(name) {
                arm = name
            } else {
                error("\(pointer)/condition", "\"\(name)\" is not one of the study's conditions, so no participant is ever given this module; name one of them, \"*\", or remove the module")
            }
        case nil:
            if !conditions.isEmpty {
                error("\(pointer)/condition", "is missing while the study has conditions, so no participant is ever given this module; use \"*\" for everyone")
            }
        }
        let schedule = schedule(module["alerts"], at: "\(pointer)/alerts", idsByUUID: idsByUUID, unlockAfter: module["unlock_after"])
        var steps: [ActivityStep] = []
        for (sectionIndex, section) in (module["sections"]?.array ?? []).enumerated() {
            for (questionIndex, question) in (section["questions"]?.array ?? []).enumerated() {
                let at = "\(pointer)/sections/\(sectionIndex)/questions/\(questionIndex)"
                guard var step = step(question, at: at) else { continue }
                step.groupName = section["name"]?.nonEmptyString
                // A repeated id keeps the later question: its answer is the one the app sends.
                steps.removeAll { $0.key.uppercased() == step.key.uppercased() }
                steps.append(step)
            }
        }
        return StudyActivity(
            activityId: id, title: LocalizedText(module["name"]?.string.map(Self.plainText) ?? id), type: .questionnaire,
            branching: false, schedule: schedule, steps: steps, arm: arm)
    }

    /// A daily schedule from enrolment: `start_offset` days on for `duration` days, at `times`.
    private mutating func schedule(
        _ alerts: JSONValue?, at pointer: String, idsByUUID: [String: String], unlockAfter: JSONValue?
    ) -> Schedule {
        var schedule = Schedule(frequency: .daily, anchor: Anchor(source: .enrollmentDate))
        let start = alerts?["start_offset"]?.integer ?? 0
        let duration = alerts?["duration"]?.integer ?? 0
        let times = (alerts?["times"]?.array ?? []).compactMap { time -> Int? in
            guard let hours = time["hours"]?.integer, let minutes = time["minutes"]?.integer else { return nil }
            return hours * 60 + minutes
        }
        if duration < 1 || times.isEmpty {
            error(
                duration < 1 ? "\(pointer)/duration" : "\(pointer)/times",
                "schedules no task, so no participant is ever given this module; give it a duration and a time, or remove it")
        }
        schedule.startDays = start
        schedule.endDays = start + max(duration, 1) - 1
        schedule.dailyTimes = Set(times).sorted().map { String(format: "%02d:%02d", $0 / 60, $0 % 60) }
        if alerts?["random"]?.bool == true, let interval = alerts?["random_interval"]?.integer, interval > 0 {
            schedule.jitterMinutes = interval
        }
        if alerts?["sticky"]?.bool == true {
            schedule.sticky = true
            schedule.stickyLabel = alerts?["sticky_label"]?.nonEmptyString
        }
        if alerts?["timeout"]?.bool == true, let after = alerts?["timeout_after"]?.integer, after > 0 {
            schedule.expiresAfterMilliseconds = after
        }
        let unlocks = (unlockAfter?.stringArray ?? []).compactMap { idsByUUID[$0] }
        if !unlocks.isEmpty { schedule.unlockAfter = unlocks }
        return schedule
    }

    /// The step a question becomes (docs/schema-protocols.md has the table).
    private mutating func step(_ question: JSONValue, at pointer: String) -> ActivityStep? {
        guard let id = question["id"]?.string, let type = question["type"]?.string else { return nil }
        guard Identifiers.isValid(id) else {
            error("\(pointer)/id", "\"\(id)\" cannot name the column its answers go in: \(Identifiers.rule)")
            return nil
        }
        let text = question["text"]?.string ?? ""
        let subtype = question["subtype"]?.string
        var step: ActivityStep
        switch type {
        case "instruction", "media", "external", "file":
            step = ActivityStep(type: .instruction, resultType: "", key: id)
            step.text = LocalizedText(text)
            var display: JSONObject = [:]
            switch type {
            case "media":
                display = ["media": .string(subtype ?? ""), "src": question["src"] ?? .null]
                if let thumb = question["thumb"] { display["thumb"] = thumb }
            case "external": display = ["embed": question["src"] ?? .null]
            case "file": display = ["link": question["src"] ?? .null, "fileName": question["file_name"] ?? .null]
            default: break
            }
            if !display.isEmpty { step.format = .other(.object(display)) }
        case "text" where subtype == "numeric":
            step = questionStep(id, "numeric", text)
            step.format = .numeric(NumericFormat(style: .decimal))
        case "text":
            step = questionStep(id, "text", text)
            step.format = .text(TextFormat(maxLength: 0, multipleLines: subtype == "long"))
        case "datetime" where subtype == "time":
            step = questionStep(id, "timeOfDay", text)
            step.format = .empty(EmptyFormat())
        case "datetime":
            step = questionStep(id, "date", text)
            step.format = .date(DateFormat(style: subtype == "date" ? .date : .dateTime))
        case "yesno":
            step = questionStep(id, "boolean", text)
            step.format = .empty(EmptyFormat())
        case "slider":
            step = questionStep(id, "continuousScale", text)
            let right: LocalizedText? = question["hint_right"]?.nonEmptyString.map { LocalizedText($0) }
            let left: LocalizedText? = question["hint_left"]?.nonEmptyString.map { LocalizedText($0) }
            let scale = ScaleFormat(
                maxValue: question["max"]?.number, minValue: question["min"]?.number, maxDesc: right, minDesc: left,
                maxFractionDigits: 0)
            step.format = .scale(scale)
        case "multi":
            step = questionStep(id, "textChoice", text)
            let options = question["options"]?.stringArray ?? []
            var seen: Set<String> = []
            for (index, option) in options.enumerated() where !seen.insert(option).inserted {
                error("\(pointer)/options/\(index)", "\"\(option)\" is offered twice: the answers could not tell them apart")
            }
            step.format = .choice(ChoiceFormat(
                textChoices: options.map { TextChoice(text: LocalizedText($0), value: $0) },
                selectionStyle: question["radio"]?.bool == true ? .single : .multiple))
        default:
            return nil  // The check refused it already.
        }
        if step.type == .question { step.skippable = question["required"]?.bool != true }
        if let group = question["rand_group"], group != .null, group != .string("") {
            step.randomGroup = group.text
        }
        step.visibility = visibility(question, at: pointer)
        return step
    }

    private func questionStep(_ id: String, _ resultType: String, _ text: String) -> ActivityStep {
        var step = ActivityStep(type: .question, resultType: resultType, key: id)
        step.title = LocalizedText(text)
        return step
    }

    /// `hide_id`, `hide_value` and `hide_if` as a rule for when the step is shown: a slider's
    /// `>N`/`<N` compares, any other trigger's answer is equal or not.
    private func visibility(_ question: JSONValue, at pointer: String) -> VisibilityRule? {
        guard let source = question["hide_id"]?.nonEmptyString, let value = question["hide_value"] else { return nil }
        if case .string(let text) = value, let first = text.first, first == ">" || first == "<", let number = Double(text.dropFirst()) {
            return VisibilityRule(source: source, operator: first == ">" ? .greaterOrEqual : .lessOrEqual, value: .number(number))
        }
        return VisibilityRule(source: source, operator: question["hide_if"]?.bool == true ? .notEqual : .equal, value: value)
    }

    /// A displayed graph of a numeric question as a dashboard chart of its runs; the bar or line
    /// type, the number of points and the blurb travel in the chart's configuration.
    private mutating func chart(_ graph: JSONValue?, activity: StudyActivity, index: Int, at pointer: String) -> Chart? {
        guard let graph, graph["display"]?.bool == true, let variable = graph["variable"]?.string else { return nil }
        guard let question = activity.steps.first(where: { $0.key == variable }), question.responseType?.isNumeric == true else {
            warn("\(pointer)/variable", "\"\(variable)\" is not a numeric question: the app draws nothing, and no chart is made")
            return nil
        }
        var configuration: JSONObject = ["type": graph["type"] ?? .string("bar")]
        if let points = graph["max_points"] { configuration["maxPoints"] = points }
        if let blurb = graph["blurb"]?.string { configuration["blurb"] = .string(blurb) }
        return Chart(
            title: "graph-\(index)", displayName: LocalizedText(graph["title"]?.nonEmptyString ?? activity.title.text(for: nil)),
            timeRangeType: .runs, dataSource: DashboardSource(activityId: activity.activityId, key: variable),
            configuration: .object(configuration))
    }

    /// What the app shows before enrolment: the instructions, and the ethics approval with the
    /// plain-language statement's link.
    private static func consent(_ properties: JSONValue?) -> Consent? {
        var screens: [ConsentScreen] = []
        if let instructions = properties?["instructions"]?.nonEmptyString {
            screens.append(ConsentScreen(
                type: .overview, title: LocalizedText(properties?["study_name"]?.nonEmptyString.map(plainText) ?? "About the study"),
                text: LocalizedText(plainText(instructions)), description: LocalizedText(plainText(instructions)),
                html: LocalizedText(instructions)))
        }
        if let ethics = properties?["ethics"]?.nonEmptyString {
            screens.append(ConsentScreen(
                type: .custom, title: "Ethics", text: LocalizedText(plainText(ethics)), description: LocalizedText(plainText(ethics)),
                url: properties?["pls"]?.nonEmptyString))
        }
        return screens.isEmpty ? nil : Consent(visualScreens: screens)
    }

    /// Protocol texts may hold HTML; titles are plain text.
    static func plainText(_ html: String) -> String {
        var text = ""
        var inTag = false
        for character in html {
            if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { text.append(character) }
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private mutating func error(_ pointer: String, _ message: String) {
        errors.append(ValidationProblem(pointer: pointer, message: message))
    }

    private mutating func warn(_ pointer: String, _ message: String) {
        warnings.append(ValidationProblem(pointer: pointer, message: message))
    }
}
