import JSONText
import StudyModels

/// A checked Sage assessment made into an activity of the study model (docs/sage.md, Mapping).
///
/// Every step becomes a step of the activity, its key the step's path with `_` (`mood_q1` for
/// `q1` in the section `mood`, as Sage's `answers.json` names answers). What the MyStudies apps
/// cannot show is not dropped: the activity is marked Sage-only, with each reason located in the
/// assessment, keeps no MyStudies steps, and is served to Sage's clients only; the assessment it
/// keeps is its whole design.
public struct AssessmentImport: Sendable {
    /// The activity, with `assessment` holding the document as imported.
    public var activity: StudyActivity
    /// Why the MyStudies apps cannot run it (empty: they can).
    public var sageOnlyReasons: [ValidationProblem] { activity.assessment?.sageOnly ?? [] }

    /// The value of the choice a question's "other" free text becomes for the MyStudies apps
    /// (Sage's own runners give it none): the choice kept beside the text in `_Other_Text`.
    public static let otherChoiceValue = "other"

    /// Maps an assessment that `AssessmentCheck` found no error in. A previous activity with the
    /// same id keeps its schedule and arm (a Sage assessment brings neither).
    public init(_ document: JSONValue, replacing previous: StudyActivity? = nil) {
        var mapper = Mapper()
        let steps = mapper.steps(document["steps"]?.array ?? [], at: "/steps", section: nil, following: nil)
        let identifier = document["identifier"]?.string ?? ""
        var activity = StudyActivity(
            activityId: identifier, title: LocalizedText(document["title"]?.nonEmptyString ?? identifier), type: .questionnaire,
            branching: steps.contains { !($0.destinations ?? []).isEmpty },
            schedule: previous?.schedule ?? Schedule(frequency: .ongoing), steps: steps, arm: previous?.arm)
        activity.versionLabel = previous?.versionLabel
        // Ongoing is a placeholder for a new activity until the team chooses a schedule.
        activity.placeholderSchedule = previous == nil ? true : previous?.placeholderSchedule
        var reasons = mapper.reasons
        if reasons.isEmpty {
            // What the mapping made must pass the study's own checks, or the apps are not sent it.
            let probe = StudyDocument(studyId: "SAGE", appId: "SAGE", name: "SAGE", activities: [activity])
            // (Its steps only: the schedule is the coordinator's, checked when the draft is saved.)
            for problem in StudyValidator.validate(probe) where problem.pointer.hasPrefix("/activities/0/steps") {
                reasons.append(ValidationProblem(pointer: "", message: "the activity made from it fails a check of the study model: \(problem.pointer.dropFirst("/activities/0".count)) \(problem.message)"))
            }
        }
        if !reasons.isEmpty {
            // The MyStudies apps are never sent it, so it keeps no steps of theirs: the assessment
            // is its design (and what its answers are read against).
            activity.steps = []
            activity.branching = false
        }
        activity.assessment = SageAssessment(document: document, sageOnly: reasons)
        self.activity = activity
    }

    private struct Mapper {
        var reasons: [ValidationProblem] = []

        mutating func sageOnly(_ pointer: String, _ message: String) {
            reasons.append(ValidationProblem(pointer: pointer, message: message))
        }

        /// The steps of one container, flattened; `following` is the key of the step after the
        /// container (where its end and `nextSection` lead), nil at the end of the assessment.
        mutating func steps(_ nodes: [JSONValue], at pointer: String, section: JSONValue?, following: String?) -> [ActivityStep] {
            let prefix = section?["identifier"]?.string.map { $0 + "_" } ?? ""
            let keys = nodes.map { prefix + ($0["identifier"]?.string ?? "") }
            // Where a jump to each sibling lands (a section's first step), once per container.
            let siblings = Dictionary(nodes.map { ($0["identifier"]?.string ?? "", firstKey(of: $0, prefix: prefix) ?? "") },
                                      uniquingKeysWith: { first, _ in first })
            var result: [ActivityStep] = []
            for (index, node) in nodes.enumerated() {
                let at = "\(pointer)/\(index)"
                let next = index + 1 < nodes.count ? firstKey(of: nodes[index + 1], prefix: prefix) : following
                if node["type"] == .string("section") {
                    result += steps(node["steps"]?.array ?? [], at: "\(at)/steps", section: node, following: next)
                    continue
                }
                guard var step = step(node, key: keys[index], at: at) else { continue }
                step.groupName = section.flatMap { $0["title"]?.nonEmptyString ?? $0["identifier"]?.string }
                step.destinations = destinations(node, step: step, at: at, siblings: siblings, next: next, end: following)
                result.append(step)
            }
            return result
        }

        /// The key of the first step a node leads into (a section's first step).
        func firstKey(of node: JSONValue, prefix: String) -> String? {
            guard let identifier = node["identifier"]?.string else { return nil }
            if node["type"] == .string("section") {
                return (node["steps"]?.array?.first).flatMap { firstKey(of: $0, prefix: identifier + "_") }
            }
            return prefix + identifier
        }

        mutating func step(_ node: JSONValue, key: String, at pointer: String) -> ActivityStep? {
            guard Identifiers.isValid(key) else {
                sageOnly("\(pointer)/identifier", "\"\(key)\" (the step's path) cannot name the column its answers go in: \(Identifiers.rule)")
                return nil
            }
            let title = node["title"]?.nonEmptyString.map { LocalizedText($0) }
            let detail = (node["detail"]?.nonEmptyString ?? node["subtitle"]?.nonEmptyString).map { LocalizedText($0) }
            switch node["type"]?.string {
            case "overview", "instruction", "completion":
                var step = ActivityStep(type: .instruction, resultType: "", key: key)
                step.title = title
                step.text = detail
                return step
            case "simpleQuestion":
                guard var step = simpleQuestion(node["inputItem"] ?? .null, key: key, at: "\(pointer)/inputItem", uiHint: node["uiHint"]?.string) else {
                    return nil
                }
                step.title = title ?? LocalizedText(key)
                step.text = detail
                step.skippable = node["optional"]?.bool ?? false
                return step
            case "choiceQuestion":
                guard var step = choiceQuestion(node, key: key, at: pointer) else { return nil }
                step.title = title ?? LocalizedText(key)
                step.text = detail
                step.skippable = node["optional"]?.bool ?? false
                return step
            case let type?:
                sageOnly("\(pointer)/type", "a \(type) step: the MyStudies apps have no such step")
                return nil
            case nil:
                return nil
            }
        }

        mutating func simpleQuestion(_ item: JSONValue, key: String, at pointer: String, uiHint: String?) -> ActivityStep? {
            let options = item["formatOptions"]
            switch item["type"]?.string {
            case "string":
                var step = ActivityStep(type: .question, resultType: "text", key: key)
                let limit = item["characterLimit"]?.integer.map { min(max($0, 0), DocumentBounds.maxLength.upperBound) } ?? 0
                var format = TextFormat(maxLength: limit, multipleLines: uiHint == "multipleLine")
                format.validationRegex = item["regExValidator"]?["pattern"]?.string
                format.invalidMessage = item["regExValidator"]?["invalidMessage"]?.string.map { LocalizedText($0) }
                format.placeholder = item["placeholder"]?.string.map { LocalizedText($0) }
                step.format = .text(format)
                return step
            case "integer" where uiHint == "likert" || uiHint == "slider":
                guard let minimum = options?["minimumValue"]?.number, let maximum = options?["maximumValue"]?.number else {
                    sageOnly("\(pointer)/formatOptions", "a \(uiHint ?? "") scale needs a minimumValue and a maximumValue for the MyStudies apps to draw it")
                    return nil
                }
                var step = ActivityStep(type: .question, resultType: "scale", key: key)
                step.format = .scale(ScaleFormat(
                    maxValue: maximum, minValue: minimum, step: options?["stepInterval"]?.number ?? 1,
                    maxDesc: options?["maximumLabel"]?.string.map { LocalizedText($0) }, minDesc: options?["minimumLabel"]?.string.map { LocalizedText($0) }))
                return step
            case "integer", "number", "year":
                var step = ActivityStep(type: .question, resultType: "numeric", key: key)
                let year = item["type"] == .string("year")
                var format = NumericFormat(style: item["type"] == .string("number") ? .decimal : .integer)
                format.minValue = options?[year ? "minimumYear" : "minimumValue"]?.number
                format.maxValue = options?[year ? "maximumYear" : "maximumValue"]?.number
                format.placeholder = item["placeholder"]?.string.map { LocalizedText($0) }
                step.format = .numeric(format)
                return step
            case "duration":
                var step = ActivityStep(type: .question, resultType: "timeInterval", key: key)
                step.format = .timeInterval(TimeIntervalFormat())
                return step
            case "time":
                var step = ActivityStep(type: .question, resultType: "timeOfDay", key: key)
                step.format = .empty(EmptyFormat())
                return step
            default:
                return nil  // The check refused it.
            }
        }

        mutating func choiceQuestion(_ node: JSONValue, key: String, at pointer: String) -> ActivityStep? {
            var choices: [TextChoice] = []
            for (index, choice) in (node["choices"]?.array ?? []).enumerated() {
                if choice["selectorType"] == .string("all") {
                    sageOnly("\(pointer)/choices/\(index)/selectorType", "a choice that selects all the others: the MyStudies apps have none")
                    return nil
                }
                let text = choice["text"]?.string ?? ""
                choices.append(TextChoice(
                    text: LocalizedText(text), value: choice["value"].flatMap { $0 == .null ? nil : $0.text } ?? text,
                    detail: choice["detail"]?.string.map { LocalizedText($0) },
                    exclusive: choice["selectorType"] == .string("exclusive") ? true : nil))
            }
            if let other = node["other"] {
                choices.append(TextChoice(
                    text: LocalizedText(other["fieldLabel"]?.nonEmptyString ?? "Other"), value: AssessmentImport.otherChoiceValue,
                    other: OtherOption(placeholder: other["placeholder"]?.string.map { LocalizedText($0) }, isMandatory: false, textfieldReq: true)))
            }
            var step = ActivityStep(type: .question, resultType: "textChoice", key: key)
            step.format = .choice(ChoiceFormat(textChoices: choices, selectionStyle: node["singleChoice"] == .bool(false) ? .multiple : .single))
            return step
        }

        /// Sage's jumps as MyStudies destinations: the survey rules in order (first match wins,
        /// as on iOS), then the next-step identifier, or the next step, as the default.
        mutating func destinations(
            _ node: JSONValue, step: ActivityStep, at pointer: String, siblings: [String: String], next: String?, end: String?
        ) -> [Destination]? {
            let rules = node["surveyRules"]?.array ?? []
            let jump = node["nextStepIdentifier"]?.string
            guard !rules.isEmpty || jump != nil else { return nil }
            func target(_ name: String) -> String {
                switch name {
                case "exit": ""
                case "nextSection", "beginning": end ?? ""
                default: siblings[name] ?? end ?? ""
                }
            }
            var destinations: [Destination] = []
            let operators = ["eq": "=", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">="]
            for (index, rule) in rules.enumerated() {
                let at = "\(pointer)/surveyRules/\(index)"
                let answer = rule["matchingAnswer"] ?? .null
                let ruleOperator = rule["ruleOperator"]?.string ?? "eq"
                guard answer != .null, let condition = answer.text else {
                    sageOnly("\(at)/matchingAnswer", answer == .null
                        ? "a rule on a skipped question: MyStudies destinations match answers only"
                        : "a rule on a list of answers: MyStudies destinations match one value")
                    return nil
                }
                let numeric = step.responseType?.isNumeric == true
                guard let symbol = operators[ruleOperator], numeric || ruleOperator == "eq" else {
                    sageOnly("\(at)/ruleOperator", "\"\(ruleOperator)\" on a \(step.resultType) question: MyStudies destinations compare choices for equality and numbers only")
                    return nil
                }
                destinations.append(Destination(condition: condition, operator: numeric ? symbol : "", destination: target(rule["skipToIdentifier"]?.string ?? "exit")))
            }
            destinations.append(Destination(destination: jump.map(target) ?? next ?? ""))
            return destinations
        }
    }
}
