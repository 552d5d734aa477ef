import Foundation
import StudyModels

/// Dates as the apps read them: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` with the study's offset, for
/// local dates and times of a study document (DST-correct for that day).
enum WireDates {
    static func format(date: String, time: String?, in zoneName: String) -> String? {
        guard let zone = TimeZone(identifier: zoneName), let (year, month, day) = LocalTimes.date(date) else { return nil }
        let seconds = time.flatMap(LocalTimes.time) ?? 0
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(
            year: year, month: month, day: day, hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60)
        return calendar.date(from: components).map { format($0, in: zone) }
    }

    static func format(_ instant: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        return formatter.string(from: instant)
    }

    /// "1.0" → 1, "1.1" → 2 (the inverse of `VersionCounters.label`); plain integers too.
    static func version(fromLabel label: String) -> Int? {
        let parts = label.split(separator: ".")
        if parts.count == 2, parts[0] == "1", let minor = Int(parts[1]), minor >= 0 { return minor + 1 }
        if parts.count == 1, let whole = Int(parts[0]), whole >= 1 { return whole }
        return nil
    }
}
