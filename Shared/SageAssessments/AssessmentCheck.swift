import JSONSchema
import JSONText
import StudyModels

/// An assessment checked as Sage's runners read it: against the mended, type-dispatched schemas,
/// then the rules no schema states (docs/sage.md, Checks). Errors are what a runner would refuse
/// or mishandle; warnings are what it accepts but probably not as the author meant. Every problem
/// is located by a JSON pointer into the uploaded document.
public struct AssessmentCheck: Sendable {
    public var errors: [ValidationProblem] = []
    public var warnings: [ValidationProblem] = []

    /// Node types only Sage's Kotlin library knows; the iOS runner refuses them.
    static let legacyNodeTypes: Set<String> = ["multipleInputQuestion", "active", "feedback", "transform", "assessmentPlaceholder", "transformableAssessment"]
    static let reservedTargets: Set<String> = ["exit", "nextSection", "beginning"]
    static let uiHints: [String: Set<String>] = [
        "choiceQuestion": ["checkbox", "radioButton"],
        "integer": ["textfield", "slider", "likert", "picker"], "number": ["textfield", "slider", "likert", "picker"],
        "string": ["textfield", "multipleLine"],
    ]
    static let resourceImageNames: Set<String> = [
        "default", "cognition", "day_to_day", "demographics", "energy", "environment", "excercise", "exit", "finance", "food", "health",
        "leisure", "medicine", "mental_health", "mood", "pain", "quality_of_life", "social", "screening", "sleep",
    ]

    public static func check(_ document: JSONValue, schemas: SageSchemaSet) -> AssessmentCheck {
        var result = AssessmentCheck()
        guard case .object = document else {
            result.error("", "an assessment is a JSON object")
            return result
        }
        result.rootRules(document)
        result.checkNodes(document["steps"], at: "/steps", depth: 0, schemas: schemas)
        // Where the check has said what is wrong in its own words, the schema's words are left out.
        let explained = Set(result.errors.map(\.pointer))
        // A rule the files state twice (a definition takes in its family's root) is said once.
        var said: Set<String> = []
        for violation in schemas.assessment.violations(of: document, limit: 200) where !explained.contains(violation.instanceLocation.description) {
            guard said.insert(violation.instanceLocation.description + "\u{0}" + violation.message).inserted else { continue }
            result.error(violation.instanceLocation.description, "\(violation.message) (schema: \(violation.keywordLocation.description))")
        }
        return result
    }

    // MARK: - The assessment

    private mutating func rootRules(_ document: JSONValue) {
        if document["type"] != .string("assessment") { error("/type", "must be \"assessment\"") }
        // (A missing identifier is the schema's to report.)
        if case .string(let identifier)? = document["identifier"], !Identifiers.isValid(identifier) {
            error("/identifier", "\"\(identifier)\" cannot be an activity id: \(Identifiers.rule)")
        }
        if case .array(let steps)? = document["steps"], steps.isEmpty { error("/steps", "must hold at least one step") }
        if case .string(let schema)? = document["$schema"] {
            let reference = schema.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
            if reference.count < 2 || !SageSchemaSet.schemaHosts.contains(reference[1]) {
                warn("/$schema", "names neither of Sage's schema hosts (\(SageSchemaSet.schemaHosts.joined(separator: ", "))); it is checked as a v2 assessment")
            }
        }
    }

    // MARK: - Nodes

    private mutating func checkNodes(_ value: JSONValue?, at pointer: String, depth: Int, schemas: SageSchemaSet) {
        guard case .array(let nodes)? = value else { return }
        var seen: [String: Int] = [:]
        let siblings = Set(nodes.compactMap { $0["identifier"]?.string })
        for (index, node) in nodes.enumerated() {
            let at = "\(pointer)/\(index)"
            guard case .string(let type)? = node["type"] else { continue }  // The schema reports it.
            if case .string(let identifier)? = node["identifier"] {
                if let first = seen[identifier] {
                    error("\(at)/identifier", "\"\(identifier)\" is also the identifier of step \(first) here; identifiers must differ among the steps of one section")
                } else {
                    seen[identifier] = index
                }
            }
            if Self.legacyNodeTypes.contains(type) {
                error("\(at)/type", "\"\(type)\" is a legacy type only Sage's Kotlin library reads; the iOS runner refuses it (use one of \(schemas.nodeTypes.joined(separator: ", ")))")
                continue
            }
            guard schemas.nodeTypes.contains(type) else {
                error("\(at)/type", "\"\(type)\" is not a step type (one of \(schemas.nodeTypes.joined(separator: ", ")))")
                continue
            }
            navigation(node, at: at, siblings: siblings)
            image(node["image"], at: "\(at)/image")
            switch type {
            case "section":
                if depth > 0 { error("\(at)/type", "a section inside a section: the iOS runner does not show nested sections") }
                checkNodes(node["steps"], at: "\(at)/steps", depth: depth + 1, schemas: schemas)
            case "simpleQuestion":
                question(node, at: at)
                inputItem(node["inputItem"], at: "\(at)/inputItem", schemas: schemas)
            case "choiceQuestion":
                question(node, at: at)
                choices(node, at: at, schemas: schemas)
            default:
                break
            }
        }
    }

    /// `nextStepIdentifier` and each rule's `skipToIdentifier` must name a sibling or a reserved
    /// word: the runners look a target up among the current section's steps only, and a name not
    /// found there silently ends the section.
    private mutating func navigation(_ node: JSONValue, at pointer: String, siblings: Set<String>) {
        func target(_ value: JSONValue?, _ where: String) {
            guard case .string(let name)? = value, !Self.reservedTargets.contains(name), !siblings.contains(name) else { return }
            warn(`where`, "\"\(name)\" is not a step of this section (nor exit, nextSection or beginning): the runner ends the section here instead")
        }
        target(node["nextStepIdentifier"], "\(pointer)/nextStepIdentifier")
        if case .array(let rules)? = node["surveyRules"] {
            for (index, rule) in rules.enumerated() { target(rule["skipToIdentifier"], "\(pointer)/surveyRules/\(index)/skipToIdentifier") }
            if node["nextStepIdentifier"] != nil, !rules.isEmpty {
                warn("\(pointer)/nextStepIdentifier", "the step has survey rules too: iOS applies the rules first, Android the next-step identifier first")
            }
        }
    }

    private mutating func image(_ image: JSONValue?, at pointer: String) {
        guard image?["type"] == .string("sageResource"), case .string(let name)? = image?["imageName"] else { return }
        if !Self.resourceImageNames.contains(name) {
            warn("\(pointer)/imageName", "\"\(name)\" is not one of Sage's resource images; a runner without it shows none")
        }
    }

    private mutating func question(_ node: JSONValue, at pointer: String) {
        guard case .string(let hint)? = node["uiHint"] else { return }
        let kind = node["type"] == .string("choiceQuestion") ? "choiceQuestion" : node["inputItem"]?["type"]?.string ?? ""
        if let known = Self.uiHints[kind], !known.contains(hint) {
            warn("\(pointer)/uiHint", "\"\(hint)\" is not a hint the runners know for this question (\(known.sorted().joined(separator: ", "))); they use their default")
        }
    }

    // MARK: - Inputs and choices

    private mutating func inputItem(_ item: JSONValue?, at pointer: String, schemas: SageSchemaSet) {
        guard let item, case .string(let type)? = item["type"] else { return }
        guard schemas.inputItemTypes.contains(type) else {
            error("\(pointer)/type", type == "checkbox"
                ? "\"checkbox\" is a legacy input only Sage's Kotlin library reads"
                : "\"\(type)\" is not an input type (one of \(schemas.inputItemTypes.joined(separator: ", ")))")
            return
        }
        if case .string(let pattern)? = item["regExValidator"]?["pattern"], !JSONSchema.isValidPattern(pattern) {
            error("\(pointer)/regExValidator/pattern", "is not a regular expression the apps can use")
        }
        let options = item["formatOptions"]
        for (low, high) in [("minimumValue", "maximumValue"), ("minimumYear", "maximumYear")] {
            if case .number(let minimum)? = options?[low], case .number(let maximum)? = options?[high], minimum > maximum {
                error("\(pointer)/formatOptions/\(high)", "is below \(low): no answer could be given")
            }
        }
        if type == "time", case .string(let minimum)? = options?["minimumValue"], case .string(let maximum)? = options?["maximumValue"],
            let low = LocalTimes.time(minimum), let high = LocalTimes.time(maximum), low > high {
            error("\(pointer)/formatOptions/maximumValue", "is before minimumValue: no answer could be given")
        }
    }

    private mutating func choices(_ node: JSONValue, at pointer: String, schemas: SageSchemaSet) {
        let baseType: String
        switch node["baseType"] {
        case .string(let name)?:
            baseType = name
        default:
            baseType = "string"
            warn("\(pointer)/baseType", "is missing; the runners take \"string\"")
        }
        guard case .array(let choices)? = node["choices"] else { return }
        let single = node["singleChoice"] != .bool(false)
        var values: [JSONValue] = []
        for (index, choice) in choices.enumerated() {
            let at = "\(pointer)/choices/\(index)"
            if let value = choice["value"], value != .null {
                if !Self.value(value, isOf: baseType) {
                    error("\(at)/value", "is not a \(baseType), the question's baseType: the answer would not be of its type")
                } else if values.contains(value) {
                    warn("\(at)/value", "is the value of an earlier choice too: the answers cannot tell them apart")
                }
                values.append(value)
            }
            if single, choice["selectorType"] == .string("all") {
                warn("\(at)/selectorType", "\"all\" selects every choice, which only means something when several can be chosen (singleChoice is true)")
            }
        }
        if case .array(let rules)? = node["surveyRules"] {
            for (index, rule) in rules.enumerated() {
                guard let answer = rule["matchingAnswer"], answer != .null, !values.isEmpty, !values.contains(answer) else { continue }
                if case .array = answer { continue }  // A multiple-choice answer, compared whole.
                warn("\(pointer)/surveyRules/\(index)/matchingAnswer", "is the value of no choice: the rule never applies")
            }
        }
        if let other = node["other"] { inputItem(other, at: "\(pointer)/other", schemas: schemas) }
    }

    static func value(_ value: JSONValue, isOf baseType: String) -> Bool {
        switch (baseType, value) {
        case ("string", .string), ("boolean", .bool), ("number", .number): true
        case ("integer", .number(let number)): number.isWhole
        default: false
        }
    }

    // MARK: - Reporting

    private mutating func error(_ pointer: String, _ message: String) {
        errors.append(ValidationProblem(pointer: pointer, message: message))
    }

    private mutating func warn(_ pointer: String, _ message: String) {
        warnings.append(ValidationProblem(pointer: pointer, message: message))
    }
}
