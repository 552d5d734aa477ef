/// The 15 question response types of MyStudies, by the `resultType` code the apps read.
public enum ResponseType: String, Codable, Sendable, CaseIterable {
    case scale
    case continuousScale
    case textScale
    case valuePicker
    case imageChoice
    case textChoice
    case boolean
    case numeric
    case timeOfDay
    case date
    case text
    case email
    case timeInterval
    case height
    case location

    /// Answers are numbers, so the question can feed a chart or a statistic and numeric branching.
    public var isNumeric: Bool {
        switch self {
        case .scale, .continuousScale, .numeric, .timeInterval, .height: true
        default: false
        }
    }

    /// Answers pick one or more of the question's choices, so choice-value branching applies.
    public var isChoice: Bool {
        switch self {
        case .textScale, .valuePicker, .imageChoice, .textChoice, .boolean: true
        default: false
        }
    }
}

/// The three active tasks, by the `resultType` code of their step.
public enum TaskType: String, Codable, Sendable, CaseIterable {
    case fetalKickCounter
    case towerOfHanoi
    case spatialSpanMemory

    /// The original servers serve only the fetal kick counter to Android; the other two are
    /// ResearchKit tasks the Android app does not have.
    public var isAvailableOnAndroid: Bool { self == .fetalKickCounter }
}

/// How many choices a choice question accepts.
public enum SelectionStyle: String, Codable, Sendable {
    case single = "Single"
    case multiple = "Multiple"
}

extension ResponseType {
    /// What a coordinator calls the kind of question, as the console's step page names it.
    public var words: String {
        switch self {
        case .scale: "scale"
        case .continuousScale: "continuous scale"
        case .textScale: "text scale"
        case .valuePicker: "value picker"
        case .imageChoice: "image choice"
        case .textChoice: "text choice"
        case .boolean: "yes or no"
        case .numeric: "number"
        case .timeOfDay: "time of day"
        case .date: "date"
        case .text: "text"
        case .email: "e-mail address"
        case .timeInterval: "time interval"
        case .height: "height"
        case .location: "location"
        }
    }

    /// The words for a step's `resultType` as written: a kind of question in words, a task's
    /// (or an unknown) type as it is, an instruction as such.
    public static func words(_ resultType: String) -> String {
        if resultType.isEmpty { return "an instruction" }
        return ResponseType(rawValue: resultType).map { "a \($0.words) question" } ?? "a \(resultType) step"
    }
}

/// How times and dates are asked for in messages: as a person types them, with an example.
public enum TimeWords {
    public static let timeForm = "a time of day is hours and minutes, such as 08:30"
    public static let mustBeATime = "must be a time of day, hours and minutes, such as 08:30"
    public static let isNotATime = "is not a time of day (hours and minutes, such as 08:30)"
    public static let isNotADate = "is not a date (year-month-day, such as 2027-01-31)"
    public static let isNotADateTime = "is not a date and time (such as 2027-01-31T08:30)"
}
