import Foundation

/// The instant of a wall-clock time in an IANA zone: the one rule every schedule, window and
/// timing of a study is read by.
///
/// A wall-clock time can be missing from a zone's day (the hour the clocks skip when summer time
/// starts, or Samoa's 2011-12-30, skipped whole), or happen twice (the hour repeated when it
/// ends). The rule, the same as Python's `zoneinfo` with `fold=0`, JavaScript's `Date` and
/// `java.time`:
/// - **skipped**: read with the offset in force before the skip, so it lands after the skip, later
///   by the skip's length (02:30 on a day that goes from 02:00 to 03:00 is 03:30; Lord Howe's
///   half-hour change moves 02:15 to 02:45);
/// - **repeated**: its first occurrence, with the offset in force before the change.
public enum ZoneTime {
    public enum Kind: String, Sendable, Equatable {
        /// The wall clock shows it once.
        case unique
        /// The clocks skip it; the instant is after the skip.
        case skipped
        /// The clocks show it twice; the instant is the first.
        case repeated
    }

    /// The wall-clock times `resolve` takes: about 34,000 years either side of 1970, far past any
    /// date a study writes, and far from where adding a day's seconds could overflow.
    public static let range: ClosedRange<Int64> = -(1 << 40)...(1 << 40)

    /// The instant (seconds since 1970-01-01T00:00:00Z) of `local`, a wall-clock time written as
    /// seconds since 1970-01-01T00:00:00 on the zone's clock, and which case of the rule it was;
    /// nil outside `range`.
    public static func resolve(local: Int64, in zone: TimeZone) -> (instant: Int64, kind: Kind)? {
        ZoneOffsets.of(zone).resolve(local: local)
    }

    /// The instant of a local date (`GregorianDays` numbering) and seconds since its midnight; nil
    /// when that is outside `range`.
    public static func instant(day: Int, seconds: Int, in zone: TimeZone) -> Date? {
        WallClock(day: day, seconds: seconds).instant(in: zone)
    }
}
