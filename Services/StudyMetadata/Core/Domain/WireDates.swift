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
        AppDates.text(instant, in: zone)
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
