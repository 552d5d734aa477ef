import Foundation
import JSONText

/// Something a move-in report says about what it read: what does not come over, what comes over
/// changed, and what a team should check, each located in what the source sent.
public struct MoveInFinding: Codable, Sendable, Equatable {
    public enum Effect: String, Codable, Sendable {
        /// Not imported: the report says why.
        case notImported
        /// Imported, but not exactly as the source had it.
        case changed
        /// Imported as it was; worth a look before launch.
        case note
    }

    public var studyId: String
    /// Where it was read: the reply and a JSON Pointer into it (`activityList#/activities/2/frequency`).
    public var at: String
    public var effect: Effect
    public var message: String

    public init(studyId: String, at: String, effect: Effect, message: String) {
        self.studyId = studyId
        self.at = at
        self.effect = effect
        self.message = message
    }
}

/// Reading the original servers' replies as they really are: numbers sent as strings and strings
/// as numbers, `""` for absent, and members left out.
enum Lenient {
    /// A non-empty string, or a number's text.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): text.isEmpty ? nil : text
        case .number: value?.text
        default: nil
        }
    }

    /// A whole number within `range`, sent as a number or as its digits; nil otherwise.
    static func integer(_ value: JSONValue?, in range: ClosedRange<Int> = -1_000_000...1_000_000) -> Int? {
        switch value {
        case .number: value?.integer.flatMap { range.contains($0) ? $0 : nil }
        case .string(let text): WholeNumber.parse(text.trimmingCharacters(in: .whitespaces), in: range)
        default: nil
        }
    }

    /// `true`/`false`, or their text.
    static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag): flag
        case .string(let text) where text == "true": true
        case .string(let text) where text == "false": false
        default: nil
        }
    }

    static func items(_ value: JSONValue?) -> [JSONValue] { value?.array ?? [] }

    /// The value as the JSON text a `Codable` type decodes from.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) -> T? {
        guard let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }
}

/// The instants the apps are sent (`2026-03-08T09:00:00.000-0500`, also without milliseconds, with
/// `Z` or `+05:30`) as local dates and times of the study's zone.
struct WireInstants {
    let zone: TimeZone

    /// The instant `text` names; nil for anything else, checked before any arithmetic.
    static func instant(_ text: String) -> Date? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 19, scalars.count <= 40, scalars[10] == "T" else { return nil }
        let head = String(String.UnicodeScalarView(scalars[0..<10]))
        guard let (year, month, day) = LocalTimes.date(head),
            let seconds = LocalTimes.time(String(String.UnicodeScalarView(scalars[11..<19])))
        else { return nil }
        var index = 19
        var milliseconds = 0
        if index < scalars.count, scalars[index] == "." {
            index += 1
            var digits = 0
            while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                if digits < 3 { milliseconds = milliseconds * 10 + Int(scalars[index].value - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0, digits <= 9 else { return nil }
            if digits < 3 { for _ in digits..<3 { milliseconds *= 10 } }
        }
        guard let offset = Self.offset(scalars[index...]) else { return nil }
        let days = GregorianDays.days(year: year, month: month, day: day)
        let local = Double(days) * 86_400 + Double(seconds) + Double(milliseconds) / 1000
        return Date(timeIntervalSince1970: local - Double(offset))
    }

    /// `Z`, `±hhmm` or `±hh:mm` in seconds east of UTC.
    private static func offset(_ scalars: ArraySlice<Unicode.Scalar>) -> Int? {
        let text = String(String.UnicodeScalarView(scalars))
        if text == "Z" { return 0 }
        guard let sign = text.unicodeScalars.first, sign == "+" || sign == "-" else { return nil }
        let digits = text.dropFirst().replacingOccurrences(of: ":", with: "")
        guard digits.count == 4, let clock = LocalTimes.time(digits.prefix(2) + ":" + digits.suffix(2)) else { return nil }
        return sign == "-" ? -clock : clock
    }

    /// The local date (`yyyy-MM-dd`) and time (`HH:mm:ss`) of `text` in the study's zone.
    func local(_ text: String?) -> (date: String, time: String)? {
        guard let text, let instant = Self.instant(text), let clock = WallClock(instant, in: zone) else { return nil }
        return (GregorianDays.dateText(clock.day), Self.clock(clock.seconds))
    }

    static func clock(_ seconds: Int) -> String {
        String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
    }
}

extension LocalizedText {
    /// A text read from a reply, which is in one language.
    static func plain(_ text: String) -> LocalizedText { LocalizedText(text) }
}
