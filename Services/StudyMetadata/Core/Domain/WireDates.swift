import Foundation
import StudyModels

/// Dates as the apps read them: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` with the study's offset, for
/// local dates and times of a study document (DST-correct for that instant).
///
/// Formatting is plain integer calendar arithmetic plus `TimeZone.secondsFromGMT(for:)`: creating
/// a `DateFormatter` per timestamp cost more than everything else `activityList` does.
package enum WireDates {
    package static func format(date: String, time: String?, in zoneName: String) -> String? {
        guard let zone = TimeZone(identifier: zoneName) else { return nil }
        return instant(date: date, time: time, in: zone).map { format($0, in: zone) }
    }

    /// The instant of a local date and time in `zone`.
    package static func instant(date: String, time: String?, in zone: TimeZone) -> Date? {
        LocalTimes.instant(date: date, time: time, in: zone)
    }

    package static func format(_ instant: Date, in zone: TimeZone) -> String {
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

    /// "1.0" → 1, "1.1" → 2 (the inverse of `VersionCounters.label`); plain integers too. A
    /// number past `VersionCounters.numbers` names no version that can exist: nil, before any
    /// arithmetic (an app may send `1.9223372036854775807`).
    package static func version(fromLabel label: String) -> Int? {
        let parts = label.split(separator: ".", omittingEmptySubsequences: false)
        let numbers = VersionCounters.numbers
        if parts.count == 2, parts[0] == "1", let minor = WholeNumber.parse(parts[1], in: 0...numbers.upperBound - 1) {
            return minor + 1
        }
        if parts.count == 1, let whole = WholeNumber.parse(parts[0], in: numbers) { return whole }
        return nil
    }
}
