import Foundation
import Synchronization

/// A zone's offsets from UTC as a table of its changes, read once per zone from Foundation and
/// kept: Foundation answers one offset in microseconds (it asks ICU each time), and a year of
/// daily runs for a hundred thousand participants asks for hundreds of millions.
///
/// The table covers `span`; an instant outside it is asked of Foundation, as before.
public final class ZoneOffsets: Sendable {
    /// 1900 to 2200: every instant a study can name, and the zone files' rules far past it.
    public static let span: Range<Int64> = -2_208_988_800..<7_258_118_400

    /// The instants the offset changes at, ascending, and the offset from each.
    private let changes: [Int64]
    private let offsets: [Int64]
    /// The offset before the first change in `span`.
    private let first: Int64
    private let zone: TimeZone

    init(_ zone: TimeZone) {
        self.zone = zone
        var changes: [Int64] = [], offsets: [Int64] = []
        let start = Date(timeIntervalSince1970: TimeInterval(Self.span.lowerBound))
        first = Int64(zone.secondsFromGMT(for: start))
        var at = start
        var previous = first
        // Each step moves past a change; a zone has a few hundred in three centuries at most,
        // and the cap keeps a zone whose data misbehaves from looping.
        while changes.count < 10_000, let next = zone.nextDaylightSavingTimeTransition(after: at),
            next.timeIntervalSince1970 < TimeInterval(Self.span.upperBound), next > at
        {
            let offset = Int64(zone.secondsFromGMT(for: next))
            // Foundation also reports changes of the summer-time flag alone (same offset).
            if offset != previous {
                changes.append(Int64(next.timeIntervalSince1970.rounded(.down)))
                offsets.append(offset)
                previous = offset
            }
            at = next
        }
        self.changes = changes
        self.offsets = offsets
    }

    private static let tables = Mutex<[String: ZoneOffsets]>([:])

    /// The table of `zone`, made on first use.
    public static func of(_ zone: TimeZone) -> ZoneOffsets {
        if let table = tables.withLock({ $0[zone.identifier] }) { return table }
        // Made outside the lock (it takes a while); two threads may both make it, and one wins.
        let table = ZoneOffsets(zone)
        return tables.withLock { tables in
            if let made = tables[zone.identifier] { return made }
            tables[zone.identifier] = table
            return table
        }
    }

    /// `ZoneTime.resolve`'s rule against this table, without allocating: the instant of `local` (a
    /// wall clock as seconds since 1970-01-01T00:00:00) and which case it was; nil outside
    /// `ZoneTime.range`.
    public func resolve(local: Int64) -> (instant: Int64, kind: ZoneTime.Kind)? {
        guard ZoneTime.range.contains(local) else { return nil }
        // No zone is more than a day from UTC, and no two changes of offset are less than a day
        // apart around a time (Samoa's skipped day is one change of 24 hours), so the offsets in
        // force a day either side of the wall clock read as UTC are every offset it can have.
        let before = offset(at: local - 86_400), middle = offset(at: local), after = offset(at: local + 86_400)
        // The instants, among those the distinct offsets give, that the zone's clocks show as `local`.
        var first: Int64?, second: Int64?
        func consider(_ candidate: Int64) {
            let instant = local - candidate
            guard offset(at: instant) == candidate else { return }
            if first == nil { first = instant } else if second == nil, first != instant { second = instant }
        }
        consider(before)
        if middle != before { consider(middle) }
        if after != before, after != middle { consider(after) }
        if let one = first, let other = second { return (min(one, other), .repeated) }
        if let only = first { return (only, .unique) }
        return (local - before, .skipped)
    }

    /// Seconds east of UTC at `instant` (seconds since 1970).
    public func offset(at instant: Int64) -> Int64 {
        guard Self.span.contains(instant) else {
            return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
        }
        // The last change at or before the instant.
        var low = 0, high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? first : offsets[low - 1]
    }
}
