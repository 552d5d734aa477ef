import Foundation

/// Dates of the proleptic Gregorian calendar (the one ISO 8601 and PostgreSQL count in) as days
/// since 1970-01-01, both ways (H. Hinnant's algorithms), and instants as ISO 8601 text in UTC.
/// Plain arithmetic: the response service reads and writes answers and their timings by the
/// thousand a second, study-metadata formats schedule times in a study's zone, and a `Calendar`
/// counts the years before 1582-10-15 as Julian.
public enum GregorianDays {
    public static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    public static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a valid date: whole 400-year eras of 146,097 days, each year
    /// counted from March so that a leap day ends it.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01: the inverse of `days(year:month:day:)`.
    public static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `yyyy-MM-dd` of the date `days` after 1970-01-01 (years 0 to 9999, as PostgreSQL reads them).
    public static func dateText(_ days: Int) -> String {
        let (year, month, day) = civil(days: days)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// Milliseconds since 1970-01-01 UTC, to the nearest (the apps send times to the millisecond).
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000).rounded())
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC, to the nearest millisecond. A formatter that truncates
    /// would write 08:00:04.045 for an instant read from 08:00:04.046 that a binary fraction
    /// holds as 4.0459999...
    public static func text(_ date: Date) -> String {
        let millis = Int(milliseconds(date))
        let dayMillis = 86_400_000
        let days = millis >= 0 ? millis / dayMillis : (millis - dayMillis + 1) / dayMillis
        let ofDay = millis - days * dayMillis
        let (year, month, day) = civil(days: days)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(ofDay / 3_600_000, 2)):\(pad(ofDay / 60_000 % 60, 2))"
            + ":\(pad(ofDay / 1_000 % 60, 2)).\(pad(ofDay % 1_000, 3))Z"
    }
}
