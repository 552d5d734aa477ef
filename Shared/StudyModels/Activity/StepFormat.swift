/// A step's `format`, typed by the step's `resultType`.
public enum StepFormat: Sendable, Equatable {
    case scale(ScaleFormat)
    case choice(ChoiceFormat)
    case imageChoice(ImageChoiceFormat)
    case numeric(NumericFormat)
    case date(DateFormat)
    case text(TextFormat)
    case email(EmailFormat)
    case timeInterval(TimeIntervalFormat)
    case height(HeightFormat)
    case location(LocationFormat)
    case empty(EmptyFormat)
    case fetalKickCounter(FetalKickCounterFormat)
    case towerOfHanoi(TowerOfHanoiFormat)
    case spatialSpanMemory(SpatialSpanMemoryFormat)
    /// Instruction and form steps carry no defined format; whatever an imported design had is kept.
    case other(JSONValue)

    /// Decodes the format of a question of `responseType`.
    static func decode(
        _ responseType: ResponseType, from container: KeyedDecodingContainer<ActivityStep.CodingKeys>
    ) throws -> StepFormat {
        let key = ActivityStep.CodingKeys.format
        switch responseType {
        case .scale, .continuousScale: return .scale(try container.decode(ScaleFormat.self, forKey: key))
        case .textScale, .valuePicker, .textChoice: return .choice(try container.decode(ChoiceFormat.self, forKey: key))
        case .imageChoice: return .imageChoice(try container.decode(ImageChoiceFormat.self, forKey: key))
        case .numeric: return .numeric(try container.decode(NumericFormat.self, forKey: key))
        case .date: return .date(try container.decode(DateFormat.self, forKey: key))
        case .text: return .text(try container.decode(TextFormat.self, forKey: key))
        case .email: return .email(try container.decode(EmailFormat.self, forKey: key))
        case .timeInterval: return .timeInterval(try container.decode(TimeIntervalFormat.self, forKey: key))
        case .height: return .height(try container.decode(HeightFormat.self, forKey: key))
        case .location: return .location(try container.decode(LocationFormat.self, forKey: key))
        case .boolean, .timeOfDay: return .empty(try container.decode(EmptyFormat.self, forKey: key))
        }
    }

    /// Decodes the format of an active task of `taskType`.
    static func decode(
        _ taskType: TaskType, from container: KeyedDecodingContainer<ActivityStep.CodingKeys>
    ) throws -> StepFormat {
        let key = ActivityStep.CodingKeys.format
        switch taskType {
        case .fetalKickCounter: return .fetalKickCounter(try container.decode(FetalKickCounterFormat.self, forKey: key))
        case .towerOfHanoi: return .towerOfHanoi(try container.decode(TowerOfHanoiFormat.self, forKey: key))
        case .spatialSpanMemory:
            return .spatialSpanMemory(try container.decode(SpatialSpanMemoryFormat.self, forKey: key))
        }
    }

    func encode(to container: inout KeyedEncodingContainer<ActivityStep.CodingKeys>) throws {
        let key = ActivityStep.CodingKeys.format
        switch self {
        case .scale(let format): try container.encode(format, forKey: key)
        case .choice(let format): try container.encode(format, forKey: key)
        case .imageChoice(let format): try container.encode(format, forKey: key)
        case .numeric(let format): try container.encode(format, forKey: key)
        case .date(let format): try container.encode(format, forKey: key)
        case .text(let format): try container.encode(format, forKey: key)
        case .email(let format): try container.encode(format, forKey: key)
        case .timeInterval(let format): try container.encode(format, forKey: key)
        case .height(let format): try container.encode(format, forKey: key)
        case .location(let format): try container.encode(format, forKey: key)
        case .empty(let format): try container.encode(format, forKey: key)
        case .fetalKickCounter(let format): try container.encode(format, forKey: key)
        case .towerOfHanoi(let format): try container.encode(format, forKey: key)
        case .spatialSpanMemory(let format): try container.encode(format, forKey: key)
        case .other(let value): try container.encode(value, forKey: key)
        }
    }
}
