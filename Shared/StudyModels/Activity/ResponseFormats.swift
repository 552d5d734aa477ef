/// The `format` objects of question steps, one type per family of response types, with the keys
/// the MyStudies apps read. Every field is optional: the original servers omitted what a
/// researcher left unset, and designs from them import unchanged.

/// `scale` and `continuousScale`.
public struct ScaleFormat: Codable, Sendable, Equatable {
    public var maxValue: Double?
    public var minValue: Double?
    public var step: Double?
    public var `default`: Double?
    public var vertical: Bool?
    public var maxDesc: LocalizedText?
    public var minDesc: LocalizedText?
    /// Base64 images shown at the ends of the scale.
    public var maxImage: String?
    public var minImage: String?
    /// `continuousScale` only.
    public var maxFractionDigits: Int?

    public init(
        maxValue: Double? = nil, minValue: Double? = nil, step: Double? = nil, default: Double? = nil,
        vertical: Bool? = nil, maxDesc: LocalizedText? = nil, minDesc: LocalizedText? = nil,
        maxImage: String? = nil, minImage: String? = nil, maxFractionDigits: Int? = nil
    ) {
        self.maxValue = maxValue
        self.minValue = minValue
        self.step = step
        self.default = `default`
        self.vertical = vertical
        self.maxDesc = maxDesc
        self.minDesc = minDesc
        self.maxImage = maxImage
        self.minImage = minImage
        self.maxFractionDigits = maxFractionDigits
    }
}

/// The free-text "other" option of a text choice.
public struct OtherOption: Codable, Sendable, Equatable {
    public var placeholder: LocalizedText?
    /// The participant must type text when choosing it.
    public var isMandatory: Bool?
    /// A text field is shown (its answer lands in `<key>_Other_Text` on the response server).
    public var textfieldReq: Bool?

    public init(placeholder: LocalizedText? = nil, isMandatory: Bool? = nil, textfieldReq: Bool? = nil) {
        self.placeholder = placeholder
        self.isMandatory = isMandatory
        self.textfieldReq = textfieldReq
    }
}

/// One choice of a `textChoice`, `textScale` or `valuePicker` question.
public struct TextChoice: Codable, Sendable, Equatable {
    public var text: LocalizedText?
    /// What is stored as the answer; the apps send it back, and choice branching matches on it.
    public var value: String?
    public var detail: LocalizedText?
    /// Choosing it clears every other choice.
    public var exclusive: Bool?
    /// LabKey's designs describe a choice here.
    public var description: LocalizedText?
    /// LabKey's designs mark plain choices `text`.
    public var type: String?
    public var other: OtherOption?

    public init(
        text: LocalizedText? = nil, value: String? = nil, detail: LocalizedText? = nil, exclusive: Bool? = nil,
        description: LocalizedText? = nil, type: String? = nil, other: OtherOption? = nil
    ) {
        self.text = text
        self.value = value
        self.detail = detail
        self.exclusive = exclusive
        self.description = description
        self.type = type
        self.other = other
    }

    /// Values may arrive as numbers in older designs; they are kept as text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        text = try container.decodeIfPresent(LocalizedText.self, forKey: .text)
        value = try container.decodeIfPresent(JSONValue.self, forKey: .value)?.text
        detail = try container.decodeIfPresent(LocalizedText.self, forKey: .detail)
        exclusive = try container.decodeIfPresent(Bool.self, forKey: .exclusive)
        description = try container.decodeIfPresent(LocalizedText.self, forKey: .description)
        type = try container.decodeIfPresent(String.self, forKey: .type)
        other = try container.decodeIfPresent(OtherOption.self, forKey: .other)
    }
}

/// `textChoice`, `textScale` and `valuePicker`.
public struct ChoiceFormat: Codable, Sendable, Equatable {
    public var textChoices: [TextChoice]?
    /// `textChoice` only.
    public var selectionStyle: SelectionStyle?
    /// `textScale`: the preselected position.
    public var `default`: Double?
    /// `textScale`: vertical layout.
    public var vertical: Bool?

    public init(
        textChoices: [TextChoice]? = nil, selectionStyle: SelectionStyle? = nil, default: Double? = nil,
        vertical: Bool? = nil
    ) {
        self.textChoices = textChoices
        self.selectionStyle = selectionStyle
        self.default = `default`
        self.vertical = vertical
    }
}

/// One picture of an `imageChoice` question.
public struct ImageChoice: Codable, Sendable, Equatable {
    public var image: String?
    public var selectedImage: String?
    public var text: LocalizedText?
    public var value: String?

    public init(image: String? = nil, selectedImage: String? = nil, text: LocalizedText? = nil, value: String? = nil) {
        self.image = image
        self.selectedImage = selectedImage
        self.text = text
        self.value = value
    }
}

/// `imageChoice`.
public struct ImageChoiceFormat: Codable, Sendable, Equatable {
    public var imageChoices: [ImageChoice]?

    public init(imageChoices: [ImageChoice]? = nil) {
        self.imageChoices = imageChoices
    }
}

/// `numeric`.
public struct NumericFormat: Codable, Sendable, Equatable {
    public enum Style: String, Codable, Sendable {
        case integer = "Integer"
        case decimal = "Decimal"
    }

    public var style: Style?
    public var unit: LocalizedText?
    public var minValue: Double?
    public var maxValue: Double?
    public var placeholder: LocalizedText?

    public init(
        style: Style? = nil, unit: LocalizedText? = nil, minValue: Double? = nil, maxValue: Double? = nil,
        placeholder: LocalizedText? = nil
    ) {
        self.style = style
        self.unit = unit
        self.minValue = minValue
        self.maxValue = maxValue
        self.placeholder = placeholder
    }
}

/// `date`.
public struct DateFormat: Codable, Sendable, Equatable {
    public enum Style: String, Codable, Sendable {
        case date = "Date"
        case dateTime = "Date-Time"
    }

    public var style: Style?
    /// Dates as the apps read them (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`).
    public var minDate: String?
    public var maxDate: String?
    public var `default`: String?
    /// The builder's range option: one of `ranges` (the apps read `custom` or none as the
    /// earliest and latest dates; the others replace one of them with the moment of answering).
    public var dateRange: String?

    /// The ranges the apps know (`DateRange` of the iOS app, which ends on any other).
    public static let ranges = ["custom", "untilCurrent", "afterCurrent"]

    public init(
        style: Style? = nil, minDate: String? = nil, maxDate: String? = nil, default: String? = nil,
        dateRange: String? = nil
    ) {
        self.style = style
        self.minDate = minDate
        self.maxDate = maxDate
        self.default = `default`
        self.dateRange = dateRange
    }
}

/// `text`.
public struct TextFormat: Codable, Sendable, Equatable {
    /// 0 means no limit.
    public var maxLength: Int?
    public var validationRegex: String?
    public var invalidMessage: LocalizedText?
    public var multipleLines: Bool?
    public var placeholder: LocalizedText?

    public init(
        maxLength: Int? = nil, validationRegex: String? = nil, invalidMessage: LocalizedText? = nil,
        multipleLines: Bool? = nil, placeholder: LocalizedText? = nil
    ) {
        self.maxLength = maxLength
        self.validationRegex = validationRegex
        self.invalidMessage = invalidMessage
        self.multipleLines = multipleLines
        self.placeholder = placeholder
    }
}

/// `email`.
public struct EmailFormat: Codable, Sendable, Equatable {
    public var placeholder: LocalizedText?

    public init(placeholder: LocalizedText? = nil) {
        self.placeholder = placeholder
    }
}

/// `timeInterval`: seconds.
public struct TimeIntervalFormat: Codable, Sendable, Equatable {
    public var `default`: Double?
    public var step: Double?

    public init(default: Double? = nil, step: Double? = nil) {
        self.default = `default`
        self.step = step
    }
}

/// `height`.
public struct HeightFormat: Codable, Sendable, Equatable {
    /// `Local`, `Metric` or `US`.
    public var measurementSystem: String?
    public var placeholder: LocalizedText?

    public init(measurementSystem: String? = nil, placeholder: LocalizedText? = nil) {
        self.measurementSystem = measurementSystem
        self.placeholder = placeholder
    }
}

/// `location`.
public struct LocationFormat: Codable, Sendable, Equatable {
    public var useCurrentLocation: Bool?

    public init(useCurrentLocation: Bool? = nil) {
        self.useCurrentLocation = useCurrentLocation
    }
}

/// `boolean` and `timeOfDay` have no settings; the object is kept only so `{}` round-trips.
public struct EmptyFormat: Codable, Sendable, Equatable {
    public init() {}
}
