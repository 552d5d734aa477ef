/// Participant-facing text with optional translations.
///
/// In a study document it is either a plain string (the English text) or an object of language
/// codes to text, `{"en": "How do you feel?", "es": "¿Cómo se siente?"}`. What the apps receive
/// is always a plain string: `resolved(for:)` picks the requested language and falls back to
/// English.
public struct LocalizedText: Codable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The language every study must provide, and the fallback.
    public static let defaultLanguage = "en"

    /// Language code → text.
    public var translations: [String: String]

    public init(_ text: String) {
        translations = [Self.defaultLanguage: text]
    }

    public init(translations: [String: String]) {
        self.translations = translations
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The text in `language` (or its base language: "es" for "es-MX"), else English, else any
    /// translation there is.
    public func text(for language: String?) -> String {
        if let language = language?.lowercased() {
            if let text = translations[language] { return text }
            if let base = language.split(whereSeparator: { $0 == "-" || $0 == "_" }).first,
                let text = translations[String(base)]
            {
                return text
            }
        }
        return translations[Self.defaultLanguage] ?? translations.sorted { $0.key < $1.key }.first?.value ?? ""
    }

    /// This text reduced to the one string the apps are sent.
    public func resolved(for language: String?) -> LocalizedText {
        LocalizedText(text(for: language))
    }

    public var description: String { text(for: nil) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self.init(text)
        } else {
            self.init(translations: try container.decode([String: String].self))
        }
    }

    /// A text with only its default language encodes as a plain string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if translations.count == 1, let english = translations[Self.defaultLanguage] {
            try container.encode(english)
        } else {
            try container.encode(translations)
        }
    }
}
