import Foundation

/// A study's setting for one activity: remind a participant, by push, when a run of it is due and
/// not done (docs/schedules.md, Reminders). The server sends it; the apps only show it.
public struct ActivityReminder: Codable, Sendable, Equatable {
    /// Minutes after a run opens that a participant who has not done it is reminded.
    public var afterMinutes: Int
    /// Spreads each reminder over this many minutes more, the same draw for a participant and
    /// run every time it is planned (the schema app's random interval), so that a whole study is
    /// not reminded in the same second.
    public var randomMinutes: Int?
    /// `HH:mm` in the participant's zone: no reminder from `quietFrom` until `quietUntil` (across
    /// midnight when `quietFrom` is later); one that would fall in them waits for their end.
    public var quietFrom: String?
    public var quietUntil: String?
    /// At most this many reminders of this activity a participant receives in a day of theirs.
    public var maxPerDay: Int
    /// The push's text; the activity's title is used when absent.
    public var message: LocalizedText?

    public init(
        afterMinutes: Int, randomMinutes: Int? = nil, quietFrom: String? = nil, quietUntil: String? = nil, maxPerDay: Int = 1,
        message: LocalizedText? = nil
    ) {
        self.afterMinutes = afterMinutes
        self.randomMinutes = randomMinutes
        self.quietFrom = quietFrom
        self.quietUntil = quietUntil
        self.maxPerDay = maxPerDay
        self.message = message
    }

    enum CodingKeys: String, CodingKey { case afterMinutes, randomMinutes, quietFrom, quietUntil, maxPerDay, message }

    /// Absent, `afterMinutes` is 0 (when the run opens) and `maxPerDay` 1.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        afterMinutes = try c.decodeIfPresent(Int.self, forKey: .afterMinutes) ?? 0
        randomMinutes = try c.decodeIfPresent(Int.self, forKey: .randomMinutes)
        quietFrom = try c.decodeIfPresent(String.self, forKey: .quietFrom)
        quietUntil = try c.decodeIfPresent(String.self, forKey: .quietUntil)
        maxPerDay = try c.decodeIfPresent(Int.self, forKey: .maxPerDay) ?? 1
        message = try c.decodeIfPresent(LocalizedText.self, forKey: .message)
    }

    /// The bounds the validator holds a reminder to: a week's delay, half a day's spread, a
    /// reminder an hour.
    public static let afterMinutesRange = 0...10_080
    public static let randomMinutesRange = 0...720
    public static let maxPerDayRange = 1...24
}
