import Foundation

/// Calendar days in UTC as `yyyy-MM-dd`: how the admin API's daily counts name their days, and
/// how the console's charts walk them.
public enum UTCDay {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static let format = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!).year().month().day().dateSeparator(.dash)

    public static func string(_ date: Date) -> String { date.formatted(format) }

    public static func date(_ day: String) -> Date? { try? format.parse(day) }

    /// The start of the day `offset` days from the one holding `date`.
    public static func start(of date: Date, offset: Int = 0) -> Date {
        let day = calendar.startOfDay(for: date)
        return calendar.date(byAdding: .day, value: offset, to: day) ?? day
    }

    /// Every day from `first` to `last`, both included (empty when `last` comes first); at most
    /// `limit` of them, the latest kept.
    public static func days(from first: String, to last: String, limit: Int = 3_660) -> [String] {
        guard let start = date(first), let end = date(last), start <= end else { return [] }
        let count = (calendar.dateComponents([.day], from: start, to: end).day ?? 0) + 1
        return (max(0, count - limit)..<count).map { string(calendar.date(byAdding: .day, value: $0, to: start) ?? start) }
    }
}
