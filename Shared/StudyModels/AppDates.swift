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
        FixedWidthText.read(text) { text -> (date: Date, offsetMinutes: Int)? in
            guard text.bytes.count == 10 || text.bytes.count == 28, let day = text.day(at: 0) else { return nil }
            let midnight = Double(day * 86_400)
            guard text.bytes.count == 28 else { return (Date(timeIntervalSince1970: midnight), 0) }
            guard text.byte(10, is: "T"), let second = text.secondOfDay(at: 11), text.byte(19, is: "."),
                let millis = text.digits(20, 3), let offset = text.offsetMinutes(at: 23, colon: false)
            else { return nil }
            let seconds = Double(second - offset * 60)
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
