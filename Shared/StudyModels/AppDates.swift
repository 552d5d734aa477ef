import Foundation

/// Dates and times as the MyStudies apps read and write them: `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, an
/// instant written on a zone's wall clock with that zone's offset then (`+0100`, no colon).
public enum AppDates {
    /// A date answer: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (exactly three fraction digits, an offset like
    /// `+0000`), or `yyyy-MM-dd` (midnight UTC), with the offset in minutes east of UTC. Unlike
    /// the newer original, the offset is kept: the instant and the wall clock both read back.
    ///
    /// Read byte by byte and counted in days of the proleptic Gregorian calendar, without a
    /// `Calendar`: every answer and every result's start and end time is read here (sixty times
    /// for a 30-question response), and building date components took a third of processing.
    public static func instantAndOffset(_ text: String) -> (date: Date, offsetMinutes: Int)? {
        var text = text
        return text.withUTF8 { bytes -> (date: Date, offsetMinutes: Int)? in
            guard bytes.count == 10 || bytes.count == 28 else { return nil }
            func digits(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<start + count {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
                let day = digits(8, 2), year >= 1, (1...12).contains(month), day >= 1,
                day <= GregorianDays.days(inMonth: month, year: year)
            else { return nil }
            let midnight = Double(GregorianDays.days(year: year, month: month, day: day) * 86_400)
            guard bytes.count == 28 else { return (Date(timeIntervalSince1970: midnight), 0) }
            let sign = bytes[23]
            guard bytes[10] == UInt8(ascii: "T"), let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"),
                let minute = digits(14, 2), bytes[16] == UInt8(ascii: ":"), let second = digits(17, 2),
                bytes[19] == UInt8(ascii: "."), let millis = digits(20, 3), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
                let offsetHours = digits(24, 2), let offsetMinutes = digits(26, 2),
                hour < 24, minute < 60, second < 60, offsetHours < 24, offsetMinutes < 60
            else { return nil }
            let offset = (offsetHours * 60 + offsetMinutes) * (sign == UInt8(ascii: "-") ? -1 : 1)
            let seconds = Double(hour * 3_600 + minute * 60 + second - offset * 60)
            return (Date(timeIntervalSince1970: midnight + seconds + Double(millis) / 1_000), offset)
        }
    }

    /// `instant` on `zone`'s wall clock, with the zone's offset at that instant (DST-correct).
    ///
    /// Formatting is plain integer calendar arithmetic plus `TimeZone.secondsFromGMT(for:)`: creating
    /// a `DateFormatter` per timestamp cost more than everything else the app's activity list does.
    public static func text(_ instant: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: instant)
        let totalMilliseconds = Int64((instant.timeIntervalSince1970 * 1000).rounded()) + Int64(offset) * 1000
        let milliseconds = Int(((totalMilliseconds % 1000) + 1000) % 1000)
        let seconds = (totalMilliseconds - Int64(milliseconds)) / 1000
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = GregorianDays.civil(days: days)
        let sign = offset < 0 ? "-" : "+"
        let absolute = abs(offset)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d%@%02d%02d", year, month, day, secondOfDay / 3600,
            secondOfDay / 60 % 60, secondOfDay % 60, milliseconds, sign, absolute / 3600, absolute / 60 % 60)
    }

    /// The wall clock of `text` (an app date) in `zone`, `yyyy-MM-ddTHH:mm`, as a browser's
    /// date-and-time input takes it; nil when `text` is not an app date or has seconds the input
    /// would drop.
    public static func wallClock(of text: String, in zone: TimeZone) -> String? {
        guard let (instant, _) = instantAndOffset(text) else { return nil }
        let written = self.text(instant, in: zone)
        guard written.utf8.count == 28, written.dropFirst(16).hasPrefix(":00.000") else { return nil }
        return String(written.prefix(16))
    }

    /// The app date of a wall clock `yyyy-MM-ddTHH:mm[:ss]` in `zone` (a time the clocks skip
    /// or repeat by `ZoneTime`'s rule); nil when `local` is not one.
    public static func text(wallClock local: String, in zone: TimeZone) -> String? {
        LocalTimes.instant(localDateTime: local, in: zone).map { text($0, in: zone) }
    }
}
