import Foundation
import Configuration

/// One named setting: its dotted configuration key and the names an operator types for it.
///
/// swift-configuration maps the key `http.maxBodySize` to the environment variable
/// `HTTP_MAX_BODY_SIZE` and to the flag `--http-max-body-size`; error messages name both so an
/// operator can find the setting whichever way they set it.
public struct Setting: Sendable, Hashable, CustomStringConvertible {
    /// Dotted key, camel-cased segments (`database.maxConnections`).
    public let key: String
    /// Whether the value must never be printed.
    public let isSecret: Bool

    public init(_ key: String, secret: Bool = false) {
        self.key = key
        self.isSecret = secret
    }

    /// The environment variable swift-configuration reads this setting from.
    public var environmentName: String {
        key.split(separator: ".").map { Self.words(in: String($0)).joined(separator: "_") }
            .joined(separator: "_").uppercased()
    }

    /// The command-line flag swift-configuration reads this setting from.
    public var flagName: String {
        "--" + key.split(separator: ".").map { Self.words(in: String($0)).joined(separator: "-") }
            .joined(separator: "-").lowercased()
    }

    public var description: String { "\(environmentName) (\(flagName))" }

    var configKey: ConfigKey { ConfigKey(key) }

    /// Splits a camel-case segment into lower-case words: `maxBodySize` → `max`, `body`, `size`.
    private static func words(in segment: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in segment {
            if character.isUppercase, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.map { $0.lowercased() }
    }
}

/// A setting that is missing or malformed. The process prints `description` as one line and
/// exits, so it names the setting and what is wrong without echoing a secret value.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let setting: Setting
    public let problem: String

    public init(_ setting: Setting, _ problem: String) {
        self.setting = setting
        self.problem = problem
    }

    public var description: String { "configuration error: \(setting): \(problem)" }
}

/// Reads settings as text and parses them with explicit errors.
///
/// `ConfigReader.int(forKey:default:)` silently falls back to the default when a value does
/// not parse; a typo in a port must stop the process instead, so every value is read as a
/// string here and converted by the caller's parser.
public struct SettingsReader: Sendable {
    public let reader: ConfigReader

    public init(_ reader: ConfigReader) {
        self.reader = reader
    }

    /// The raw text of a setting, or `nil` when it is absent or empty.
    public func text(_ setting: Setting) -> String? {
        guard let value = reader.string(forKey: setting.configKey, isSecret: setting.isSecret) else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// A required setting's text.
    public func requiredText(_ setting: Setting) throws(ConfigurationError) -> String {
        guard let value = text(setting) else { throw ConfigurationError(setting, "is required but not set") }
        return value
    }

    /// Parses a setting, or returns `defaultValue` when it is absent.
    public func value<Value>(
        _ setting: Setting,
        default defaultValue: Value,
        parse: (String) throws(ConfigurationError) -> Value
    ) throws(ConfigurationError) -> Value {
        guard let raw = text(setting) else { return defaultValue }
        return try parse(raw)
    }

    /// An absolute `http://` or `https://` URL.
    public func httpURL(_ setting: Setting, default defaultValue: URL) throws(ConfigurationError) -> URL {
        try value(setting, default: defaultValue) { (raw: String) throws(ConfigurationError) -> URL in
            guard let url = URL(string: raw), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil
            else {
                throw ConfigurationError(setting, "must be an http:// or https:// URL, got \"\(raw)\"")
            }
            return url
        }
    }

    /// An integer within `range`.
    public func integer(_ setting: Setting, default defaultValue: Int, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        try value(setting, default: defaultValue) { (raw: String) throws(ConfigurationError) -> Int in
            guard let number = Int(raw), range.contains(number) else {
                throw ConfigurationError(setting, "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(raw)\"")
            }
            return number
        }
    }

    /// One of a fixed set of words.
    public func choice<Value: RawRepresentable & CaseIterable>(
        _ setting: Setting,
        default defaultValue: Value
    ) throws(ConfigurationError) -> Value where Value.RawValue == String {
        try value(setting, default: defaultValue) { (raw: String) throws(ConfigurationError) -> Value in
            guard let parsed = Value(rawValue: raw.lowercased()) else {
                let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(setting, "must be one of \(allowed), got \"\(raw)\"")
            }
            return parsed
        }
    }
}
