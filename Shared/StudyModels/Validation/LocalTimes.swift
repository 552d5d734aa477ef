import Foundation

/// Strict parsers for the local dates and times of a study document (interpreted in the
/// study's time zone), comparable without a calendar.
public enum LocalTimes {
    /// `yyyy-MM-dd` → (year, month, day), checking the day exists. Digits are ASCII digits only
    /// (`Int` would also take a sign: "+202").
    public static func date(_ text: String) -> (Int, Int, Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1
        else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1] ? (year, month, day) : nil
    }

    /// `HH:mm` or `HH:mm:ss` → seconds since midnight.
    public static func time(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count),
            parts.allSatisfy({ $0.unicodeScalars.count == 2 && $0.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = parts.count == 3 ? Int(parts[2]) : 0
        guard let second, (0...59).contains(second) else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// `yyyy-MM-ddTHH:mm[:ss]` → a sortable number (date digits then seconds).
    public static func dateTime(_ text: String) -> Int? {
        let halves = text.split(separator: "T", omittingEmptySubsequences: false)
        guard halves.count == 2, let (year, month, day) = date(String(halves[0])), let seconds = time(String(halves[1]))
        else { return nil }
        return ((year * 100 + month) * 100 + day) * 100_000 + seconds
    }

    /// A sortable number for a date alone.
    public static func sortableDate(_ text: String) -> Int? {
        date(text).map { ($0.0 * 100 + $0.1) * 100 + $0.2 }
    }

    /// The instant of a local date and (optional) time in `zone`, by `ZoneTime`'s rule for a time
    /// the clocks skip or repeat.
    public static func instant(date: String, time: String?, in zone: TimeZone) -> Date? {
        guard let (year, month, day) = self.date(date) else { return nil }
        return ZoneTime.instant(
            day: GregorianDays.days(year: year, month: month, day: day), seconds: time.flatMap(self.time) ?? 0, in: zone)
    }

    /// The instant of a local `yyyy-MM-ddTHH:mm[:ss]` in `zone`.
    public static func instant(localDateTime text: String, in zone: TimeZone) -> Date? {
        let halves = text.split(separator: "T", maxSplits: 1).map(String.init)
        guard halves.count == 2 else { return nil }
        return instant(date: halves[0], time: halves[1], in: zone)
    }
}
