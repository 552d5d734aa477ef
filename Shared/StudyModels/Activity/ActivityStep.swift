/// One step of an activity, in the shape the apps read from `/StudyMetaData/activity`.
///
/// The same type is the authoring form (texts may carry translations, unset fields are absent)
/// and, after `served(language:)`, what the apps are sent (one string per text, every field the
/// original servers always sent present).
public struct ActivityStep: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case instruction, question, form, task
    }

    public var type: Kind
    /// The response type code for questions, `grouped` for forms, the task type for tasks.
    public var resultType: String
    /// The step's key: unique within its activity (or form), the column name of its answers.
    public var key: String
    public var title: LocalizedText?
    public var text: LocalizedText?
    public var skippable: Bool?
    public var groupName: String?
    /// Forms: the participant may fill the form several times.
    public var repeatable: Bool?
    public var repeatableText: LocalizedText?
    public var destinations: [Destination]?
    /// HealthKit quantity type offered as an alternative answer source (iOS).
    public var healthDataKey: String?
    public var format: StepFormat?
    /// A form's questions.
    public var steps: [ActivityStep]?
    /// Fields of the original servers' survey extensions, carried through unchanged.
    public var options: [JSONValue]?
    public var isHidden: JSONValue?
    public var groupId: JSONValue?
    public var sourceQuestionKey: JSONValue?
    public var defaultVisibility: JSONValue?
    public var isPiping: JSONValue?
    public var preLoadLogic: JSONValue?
    public var pipingLogic: JSONValue?
    /// When the step is shown, by another step's answer (the schema app's `hide_id` rules; the
    /// MyStudies apps branch with `destinations` instead and are not sent this).
    public var visibility: VisibilityRule?
    /// Of the steps sharing a random group, one drawn each run is shown (schema's `rand_group`).
    public var randomGroup: String?

    public init(type: Kind, resultType: String, key: String) {
        self.type = type
        self.resultType = resultType
        self.key = key
    }

    /// The response type of a question step.
    public var responseType: ResponseType? { type == .question ? ResponseType(rawValue: resultType) : nil }

    /// The task type of an active-task step.
    public var taskType: TaskType? { type == .task ? TaskType(rawValue: resultType) : nil }

    enum CodingKeys: String, CodingKey {
        case type, resultType, key, title, text, skippable, groupName, repeatable, repeatableText, destinations
        case healthDataKey, format, steps, options, isHidden, groupId, sourceQuestionKey, defaultVisibility
        case isPiping, preLoadLogic, pipingLogic, visibility, randomGroup
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(Kind.self, forKey: .type)
        resultType = try container.decodeIfPresent(String.self, forKey: .resultType) ?? ""
        key = try container.decode(String.self, forKey: .key)
        title = try container.decodeIfPresent(LocalizedText.self, forKey: .title)
        text = try container.decodeIfPresent(LocalizedText.self, forKey: .text)
        skippable = try container.decodeIfPresent(Bool.self, forKey: .skippable)
        groupName = try container.decodeIfPresent(String.self, forKey: .groupName)
        repeatable = try container.decodeIfPresent(Bool.self, forKey: .repeatable)
        repeatableText = try container.decodeIfPresent(LocalizedText.self, forKey: .repeatableText)
        destinations = try container.decodeIfPresent([Destination].self, forKey: .destinations)
        healthDataKey = try container.decodeIfPresent(String.self, forKey: .healthDataKey)
        steps = try container.decodeIfPresent([ActivityStep].self, forKey: .steps)
        options = try container.decodeIfPresent([JSONValue].self, forKey: .options)
        isHidden = try container.decodeIfPresent(JSONValue.self, forKey: .isHidden)
        groupId = try container.decodeIfPresent(JSONValue.self, forKey: .groupId)
        sourceQuestionKey = try container.decodeIfPresent(JSONValue.self, forKey: .sourceQuestionKey)
        defaultVisibility = try container.decodeIfPresent(JSONValue.self, forKey: .defaultVisibility)
        isPiping = try container.decodeIfPresent(JSONValue.self, forKey: .isPiping)
        preLoadLogic = try container.decodeIfPresent(JSONValue.self, forKey: .preLoadLogic)
        pipingLogic = try container.decodeIfPresent(JSONValue.self, forKey: .pipingLogic)
        visibility = try container.decodeIfPresent(VisibilityRule.self, forKey: .visibility)
        randomGroup = try container.decodeIfPresent(String.self, forKey: .randomGroup)

        switch type {
        case .question:
            guard let responseType = ResponseType(rawValue: resultType) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .resultType, in: container,
                    debugDescription: "unknown question resultType \"\(resultType)\"; expected one of "
                        + ResponseType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if container.contains(.format), try !container.decodeNil(forKey: .format) {
                format = try StepFormat.decode(responseType, from: container)
            }
        case .task:
            guard let taskType = TaskType(rawValue: resultType) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .resultType, in: container,
                    debugDescription: "unknown task resultType \"\(resultType)\"; expected one of "
                        + TaskType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if container.contains(.format), try !container.decodeNil(forKey: .format) {
                format = try StepFormat.decode(taskType, from: container)
            }
        case .instruction, .form:
            format = try container.decodeIfPresent(JSONValue.self, forKey: .format).map(StepFormat.other)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(resultType, forKey: .resultType)
        try container.encode(key, forKey: .key)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encodeIfPresent(skippable, forKey: .skippable)
        try container.encodeIfPresent(groupName, forKey: .groupName)
        try container.encodeIfPresent(repeatable, forKey: .repeatable)
        try container.encodeIfPresent(repeatableText, forKey: .repeatableText)
        try container.encodeIfPresent(destinations, forKey: .destinations)
        try container.encodeIfPresent(healthDataKey, forKey: .healthDataKey)
        try format?.encode(to: &container)
        try container.encodeIfPresent(steps, forKey: .steps)
        try container.encodeIfPresent(options, forKey: .options)
        try container.encodeIfPresent(isHidden, forKey: .isHidden)
        try container.encodeIfPresent(groupId, forKey: .groupId)
        try container.encodeIfPresent(sourceQuestionKey, forKey: .sourceQuestionKey)
        try container.encodeIfPresent(defaultVisibility, forKey: .defaultVisibility)
        try container.encodeIfPresent(isPiping, forKey: .isPiping)
        try container.encodeIfPresent(preLoadLogic, forKey: .preLoadLogic)
        try container.encodeIfPresent(pipingLogic, forKey: .pipingLogic)
        try container.encodeIfPresent(visibility, forKey: .visibility)
        try container.encodeIfPresent(randomGroup, forKey: .randomGroup)
    }
}

/// A step shown only while another step's answer compares with `value` as `operator` says.
public struct VisibilityRule: Codable, Sendable, Equatable {
    public enum Operator: String, Codable, Sendable, CaseIterable {
        /// Shown when the answer equals the value.
        case equal = "eq"
        /// Shown unless the answer equals the value.
        case notEqual = "ne"
        /// Shown when the (numeric) answer is at least the value.
        case greaterOrEqual = "ge"
        /// Shown when the (numeric) answer is at most the value.
        case lessOrEqual = "le"
    }

    /// The key of the step whose answer decides.
    public var source: String
    public var `operator`: Operator
    public var value: JSONValue

    public init(source: String, operator: Operator, value: JSONValue) {
        self.source = source
        self.operator = `operator`
        self.value = value
    }
}

/// Where the activity goes after a step (`destinations[]`).
///
/// The entry with an empty `condition` is the default next step. For a choice question,
/// `condition` is a choice value; for numeric branching it is a number compared with `operator`.
/// An empty `destination` ends the activity.
public struct Destination: Codable, Sendable, Equatable {
    /// A numeric comparison, named as the apps name it: both apps compare an answer by these
    /// names only (the iOS app traps on any other), and the original servers wrote them.
    public enum Operator: String, Codable, Sendable, CaseIterable {
        case greater = "gt"
        case less = "lt"
        case equal = "e"
        case notEqual = "ne"
        case greaterOrEqual = "gte"
        case lessOrEqual = "lte"

        /// The comparison a document names, by the apps' name or its symbol (`>=`), which
        /// documents written for StudyStack before it served the apps' names use.
        public init?(named name: String) {
            if let named = Operator(rawValue: name) {
                self = named
                return
            }
            switch name {
            case ">": self = .greater
            case "<": self = .less
            case "=": self = .equal
            case "!=": self = .notEqual
            case ">=": self = .greaterOrEqual
            case "<=": self = .lessOrEqual
            default: return nil
            }
        }

        /// How a coordinator reads it.
        public var symbol: String {
            switch self {
            case .greater: ">"
            case .less: "<"
            case .equal: "="
            case .notEqual: "!="
            case .greaterOrEqual: ">="
            case .lessOrEqual: "<="
            }
        }
    }

    public var condition: String
    public var `operator`: String
    public var destination: String

    public init(condition: String = "", operator: String = "", destination: String) {
        self.condition = condition
        self.operator = `operator`
        self.destination = destination
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        condition = try container.decodeIfPresent(JSONValue.self, forKey: .condition)?.text ?? ""
        `operator` = try container.decodeIfPresent(String.self, forKey: .operator) ?? ""
        destination = try container.decodeIfPresent(String.self, forKey: .destination) ?? ""
    }

    /// The numeric comparison, when this is numeric branching.
    public var numericOperator: Operator? { Operator(named: `operator`) }
}
