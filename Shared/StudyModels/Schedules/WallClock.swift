import Foundation

/// A wall-clock time in a zone as a local day (`GregorianDays` numbering) and seconds since that
/// day's midnight, and back to an instant by `ZoneTime`'s rule: the arithmetic every schedule is
/// expanded with, so that a run at 08:00 stays at 08:00 on the wall clock whatever the offset.
public struct WallClock: Sendable, Equatable, Comparable {
    public var day: Int
    /// 0 to 86,399.
    public var seconds: Int

    public init(day: Int, seconds: Int) {
        self.day = day
        self.seconds = seconds
    }

    /// The instants a schedule may name: `ZoneTime.range` less a day either side, so that a day
    /// or a month added to a wall clock of one never leaves it.
    static let instants: ClosedRange<Double> = Double(ZoneTime.range.lowerBound + 86_400 * 400)...Double(ZoneTime.range.upperBound - 86_400 * 400)

    /// What the zone's clocks showed at `instant`; nil past `instants`.
    public init?(_ instant: Date, in zone: TimeZone) {
        self.init(instant, in: ZoneOffsets.of(zone))
    }

    /// The same, read against a zone's table (an expansion reads its participant's once).
    public init?(_ instant: Date, in table: ZoneOffsets) {
        let seconds = instant.timeIntervalSince1970.rounded(.down)
        guard Self.instants.contains(seconds) else { return nil }
        let local = Int64(seconds) + table.offset(at: Int64(seconds))
        let (day, ofDay) = local.quotientAndRemainder(dividingBy: 86_400)
        self.day = Int(ofDay < 0 ? day - 1 : day)
        self.seconds = Int(ofDay < 0 ? ofDay + 86_400 : ofDay)
    }

    /// The instant of this wall clock in `zone` (a skipped time after the skip, a repeated one
    /// its first occurrence); nil past `ZoneTime.range`.
    public func instant(in zone: TimeZone) -> Date? {
        resolve(in: zone)?.instant
    }

    /// The instant, and whether the zone's clocks skip this wall clock (the hour lost when summer
    /// time starts, Samoa's 2011-12-30).
    public func resolve(in zone: TimeZone) -> (instant: Date, skipped: Bool)? {
        resolve(in: ZoneOffsets.of(zone))
    }

    /// The same, read against a zone's table. A day or seconds past any instant (a wall clock
    /// made from numbers from outside) has none, rather than overflowing.
    public func resolve(in table: ZoneOffsets) -> (instant: Date, skipped: Bool)? {
        let (midnight, overflow) = Int64(day).multipliedReportingOverflow(by: 86_400)
        let (local, overflowAgain) = midnight.addingReportingOverflow(Int64(seconds))
        guard !overflow, !overflowAgain, let resolved = table.resolve(local: local) else { return nil }
        return (Date(timeIntervalSince1970: TimeInterval(resolved.instant)), resolved.kind == .skipped)
    }

    public static func < (lhs: WallClock, rhs: WallClock) -> Bool {
        (lhs.day, lhs.seconds) < (rhs.day, rhs.seconds)
    }

    /// 1 (Sunday) to 7 (Saturday), as the study document and the apps number weekdays.
    public var weekday: Int {
        // 1970-01-01 was a Thursday (5).
        let fromThursday = (day % 7 + 7) % 7
        return (fromThursday + 4) % 7 + 1
    }

    /// The same time `months` calendar months later; a day past the end of the month it lands in
    /// is that month's last day (the 31st in April is the 30th, 29 February in 2027 the 28th).
    public func addingMonths(_ months: Int) -> WallClock {
        let (year, month, dayOfMonth) = GregorianDays.civil(days: day)
        let total = year * 12 + (month - 1) + months
        let newYear = total >= 0 ? total / 12 : (total - 11) / 12
        let newMonth = total - newYear * 12 + 1
        let newDay = min(dayOfMonth, GregorianDays.days(inMonth: newMonth, year: newYear))
        return WallClock(day: GregorianDays.days(year: newYear, month: newMonth, day: newDay), seconds: seconds)
    }
}

extension WallClock {
    /// `instant` in RFC 3339 with the zone's offset at that instant, to the second:
    /// `2026-04-05T08:00:00+10:00`.
    public static func rfc3339(_ instant: Date, in zone: TimeZone) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let offset = Int(ZoneOffsets.of(zone).offset(at: seconds))
        guard let clock = WallClock(instant, in: zone) else { return GregorianDays.text(instant) }
        let (year, month, day) = GregorianDays.civil(days: clock.day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        let sign = offset < 0 ? "-" : "+"
        let yearText = String(year)
        let date = String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + "-\(two(month))-\(two(day))"
        let time = "\(two(clock.seconds / 3600)):\(two(clock.seconds / 60 % 60)):\(two(clock.seconds % 60))"
        return "\(date)T\(time)\(sign)\(two(abs(offset) / 3600)):\(two(abs(offset) / 60 % 60))"
    }

    /// The instant of an RFC 3339 time to the second, as `rfc3339` writes it:
    /// `yyyy-MM-ddTHH:mm:ss` and `Z` or an offset `±HH:MM`; nil for anything else. Read byte by
    /// byte: a page of a participant's runs reads two for each run, and Foundation's
    /// `ISO8601DateFormatter` builds an ICU formatter for each, which took most of that page's time.
    public static func instant(rfc3339 text: String) -> Date? {
        FixedWidthText.read(text) { text -> Date? in
            let count = text.bytes.count
            guard count == 20 || count == 25, let day = text.day(at: 0), text.byte(10, is: "T", or: "t"),
                let second = text.secondOfDay(at: 11)
            else { return nil }
            let offsetMinutes: Int
            if count == 20 {
                guard text.byte(19, is: "Z", or: "z") else { return nil }
                offsetMinutes = 0
            } else {
                guard let offset = text.offsetMinutes(at: 19, colon: true) else { return nil }
                offsetMinutes = offset
            }
            return Date(timeIntervalSince1970: Double(day * 86_400 + second - offsetMinutes * 60))
        }
    }
}
