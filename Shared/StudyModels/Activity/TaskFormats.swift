/// The `format` objects of active-task steps: the configurable attributes of each task.
/// `duration` is kept as the original sent it (LabKey's designs send `"01.00"`, WCP seconds).

/// Fetal kick counter: count kicks within a time limit.
public struct FetalKickCounterFormat: Codable, Sendable, Equatable {
    public var duration: JSONValue?
    public var kickCount: Int?

    public init(duration: JSONValue? = nil, kickCount: Int? = nil) {
        self.duration = duration
        self.kickCount = kickCount
    }
}

/// Tower of Hanoi.
public struct TowerOfHanoiFormat: Codable, Sendable, Equatable {
    public var numberOfDisks: Int?
    public var duration: JSONValue?

    public init(numberOfDisks: Int? = nil, duration: JSONValue? = nil) {
        self.numberOfDisks = numberOfDisks
        self.duration = duration
    }
}

/// Spatial span memory.
public struct SpatialSpanMemoryFormat: Codable, Sendable, Equatable {
    public var initialSpan: Int?
    public var minimumSpan: Int?
    public var maximumSpan: Int?
    /// Seconds per item shown.
    public var playSpeed: Double?
    public var maximumTests: Int?
    public var maximumConsecutiveFailures: Int?
    public var requireReversal: Bool?
    public var customTargetImage: String?
    public var customTargetPluralName: LocalizedText?
    public var duration: JSONValue?

    public init(
        initialSpan: Int? = nil, minimumSpan: Int? = nil, maximumSpan: Int? = nil, playSpeed: Double? = nil,
        maximumTests: Int? = nil, maximumConsecutiveFailures: Int? = nil, requireReversal: Bool? = nil,
        customTargetImage: String? = nil, customTargetPluralName: LocalizedText? = nil, duration: JSONValue? = nil
    ) {
        self.initialSpan = initialSpan
        self.minimumSpan = minimumSpan
        self.maximumSpan = maximumSpan
        self.playSpeed = playSpeed
        self.maximumTests = maximumTests
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.requireReversal = requireReversal
        self.customTargetImage = customTargetImage
        self.customTargetPluralName = customTargetPluralName
        self.duration = duration
    }
}
