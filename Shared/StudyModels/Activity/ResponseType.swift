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
