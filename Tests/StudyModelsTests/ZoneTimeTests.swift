import Foundation
import StudyModels
import Testing
import TestSupport

/// `ZoneTime`: a wall-clock time's instant in a zone, with the rule for a time the clocks skip or
/// repeat; checked by hand at each kind of change, and against Python's `zoneinfo` (its own
/// reading of the zone files, `fold=0`) over random times, most of them beside a change.
@Suite struct ZoneTimeTests {
    /// Seconds since 1970-01-01T00:00:00 on a wall clock.
    static func local(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int = 0) -> Int64 {
        Int64(GregorianDays.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    static func utc(_ text: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: text)?.timeIntervalSince1970 ?? .nan)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var zone: String
        var local: Int64
        var instant: String
        var kind: ZoneTime.Kind
        var why: String
        var testDescription: String { "\(zone) \(why)" }
    }

    static let handChecked: [Case] = [
        // Melbourne: summer time ends 2026-04-05 03:00 +11 (clocks back to 02:00 +10), starts
        // 2026-10-04 02:00 +10 (clocks on to 03:00 +11).
        Case(zone: "Australia/Melbourne", local: local(2026, 4, 5, 2, 30), instant: "2026-04-04T15:30:00Z", kind: .repeated, why: "02:30 twice: the first, +11"),
        Case(zone: "Australia/Melbourne", local: local(2026, 4, 5, 3, 30), instant: "2026-04-04T17:30:00Z", kind: .unique, why: "03:30 after the change, +10"),
        Case(zone: "Australia/Melbourne", local: local(2026, 10, 4, 2, 30), instant: "2026-10-03T16:30:00Z", kind: .skipped, why: "02:30 skipped: 03:30 +11"),
        Case(zone: "Australia/Melbourne", local: local(2026, 3, 20, 8, 0), instant: "2026-03-19T21:00:00Z", kind: .unique, why: "08:00 in March, +11"),
        Case(zone: "Australia/Melbourne", local: local(2026, 4, 20, 8, 0), instant: "2026-04-19T22:00:00Z", kind: .unique, why: "08:00 in April, +10"),
        // Lord Howe: a half-hour change. +11 in summer, +10:30 in winter; 2026-04-05 02:00 back to
        // 01:30, 2026-10-04 02:00 on to 02:30.
        Case(zone: "Australia/Lord_Howe", local: local(2026, 4, 5, 1, 45), instant: "2026-04-04T14:45:00Z", kind: .repeated, why: "01:45 twice: the first, +11"),
        Case(zone: "Australia/Lord_Howe", local: local(2026, 10, 4, 2, 15), instant: "2026-10-03T15:45:00Z", kind: .skipped, why: "02:15 skipped: 02:45 +11"),
        // St John's, Newfoundland: -03:30 in winter, -02:30 in summer; 2026-03-08 02:00 on to 03:00.
        Case(zone: "America/St_Johns", local: local(2026, 1, 15, 8, 0), instant: "2026-01-15T11:30:00Z", kind: .unique, why: "08:00 in January, -03:30"),
        Case(zone: "America/St_Johns", local: local(2026, 3, 8, 2, 30), instant: "2026-03-08T06:00:00Z", kind: .skipped, why: "02:30 skipped: 03:30 -02:30"),
        // Samoa skipped 2011-12-30 whole: 2011-12-29 23:59:59 -10 was followed by 2011-12-31 00:00 +14.
        Case(zone: "Pacific/Apia", local: local(2011, 12, 30, 9, 0), instant: "2011-12-30T19:00:00Z", kind: .skipped, why: "2011-12-30 09:00 skipped: the 31st's 09:00"),
        Case(zone: "Pacific/Apia", local: local(2011, 12, 29, 9, 0), instant: "2011-12-29T19:00:00Z", kind: .unique, why: "2011-12-29 09:00, -10"),
        Case(zone: "Pacific/Apia", local: local(2011, 12, 31, 9, 0), instant: "2011-12-30T19:00:00Z", kind: .unique, why: "2011-12-31 09:00, +14"),
        // London, and zones without changes.
        Case(zone: "Europe/London", local: local(2026, 10, 25, 1, 30), instant: "2026-10-25T00:30:00Z", kind: .repeated, why: "01:30 twice: the first, BST"),
        Case(zone: "Europe/London", local: local(2026, 3, 29, 1, 30), instant: "2026-03-29T01:30:00Z", kind: .skipped, why: "01:30 skipped: 02:30 BST"),
        Case(zone: "Asia/Kolkata", local: local(2024, 2, 29, 23, 59, 59), instant: "2024-02-29T18:29:59Z", kind: .unique, why: "a leap day's last second, +05:30"),
        Case(zone: "UTC", local: local(2026, 11, 26, 0, 0), instant: "2026-11-26T00:00:00Z", kind: .unique, why: "UTC"),
    ]

    @Test(arguments: handChecked)
    func handCheckedChanges(_ check: Case) throws {
        let zone = try #require(TimeZone(identifier: check.zone))
        let resolved = try #require(ZoneTime.resolve(local: check.local, in: zone))
        #expect(resolved.instant == Self.utc(check.instant), "\(check.why)")
        #expect(resolved.kind == check.kind, "\(check.why)")
    }

    /// Wall clocks far outside any date are refused, not computed into an overflow.
    @Test func wallClocksOutsideItsRangeAreRefused() throws {
        let zone = try #require(TimeZone(identifier: "Europe/London"))
        #expect(ZoneTime.resolve(local: .max, in: zone) == nil)
        #expect(ZoneTime.resolve(local: .min, in: zone) == nil)
        #expect(ZoneTime.instant(day: .max, seconds: 0, in: zone) == nil)
        #expect(ZoneTime.instant(day: 0, seconds: .max, in: zone) == nil)
        #expect(ZoneTime.resolve(local: ZoneTime.range.upperBound, in: zone) != nil)
    }

    static let zones = [
        "Australia/Melbourne", "Australia/Lord_Howe", "America/St_Johns", "Pacific/Apia", "Europe/London",
        "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/Sao_Paulo", "Europe/Berlin", "UTC",
    ]

    /// 4,000 random wall clocks from 1996 to 2036 in eleven zones: three in four within two
    /// hours of one of the zone's changes of offset (found by `Foundation`; the oracle checks
    /// whatever they are), the rest anywhere. Each instant and kind must be `zoneinfo`'s.
    @Test func agreesWithPythonsZoneinfo() throws {
        var random = SplitMix64(seed: 20_261_128)
        let start = Date(timeIntervalSince1970: TimeInterval(Self.local(1996, 1, 1, 0, 0)))
        let end = Date(timeIntervalSince1970: TimeInterval(Self.local(2036, 12, 31, 0, 0)))
        var changes: [String: [Int64]] = [:]  // each change's wall clock, before it
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            var at = start
            while let next = zone.nextDaylightSavingTimeTransition(after: at), next < end {
                let before = Int64(zone.secondsFromGMT(for: next.addingTimeInterval(-1)))
                changes[name, default: []].append(Int64(next.timeIntervalSince1970) + before)
                at = next
            }
        }
        var cases: [(zone: String, local: Int64)] = []
        for _ in 0..<4_000 {
            let zone = Self.zones[Int(random.next() % UInt64(Self.zones.count))]
            let nearChanges = changes[zone] ?? []
            if !nearChanges.isEmpty, random.next() % 4 != 0 {
                let change = nearChanges[Int(random.next() % UInt64(nearChanges.count))]
                cases.append((zone, change + Int64(random.next() % 14_400) - 7_200))
            } else {
                let span = UInt64(Self.local(2036, 12, 31, 0, 0) - Self.local(1996, 1, 1, 0, 0))
                cases.append((zone, Self.local(1996, 1, 1, 0, 0) + Int64(random.next() % span)))
            }
        }
        let kinds = Set(cases.compactMap { try? ZoneTime.resolve(local: $0.local, in: #require(TimeZone(identifier: $0.zone)))?.kind })
        #expect(kinds == [.unique, .skipped, .repeated], "the cases reach every kind")

        let input = cases.map { "\($0.zone) \($0.local)" }.joined(separator: "\n")
        let output = try ExternalTool.run("python3", ["-c", Self.oracle], input: Data(input.utf8))
        let answers = output.split(separator: "\n")
        try #require(answers.count == cases.count)
        var disagreements: [String] = []
        for (check, answer) in zip(cases, answers) {
            let zone = try #require(TimeZone(identifier: check.zone))
            let resolved = try #require(ZoneTime.resolve(local: check.local, in: zone))
            let mine = "\(resolved.instant) \(resolved.kind.rawValue)"
            if mine != answer { disagreements.append("\(check.zone) local \(check.local): \(mine), zoneinfo \(answer)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(cases.count): \(disagreements.prefix(5))")
    }

    /// The table of each zone's offsets says what Foundation says, at every change and a second
    /// either side of it, and at random instants from 1900 to 2200.
    @Test func offsetTablesAgreeWithFoundation() throws {
        var random = SplitMix64(seed: 1_900_2200)
        var checked = 0
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            let table = ZoneOffsets.of(zone)
            var instants: [Int64] = (0..<2_000).map { _ in
                ZoneOffsets.span.lowerBound + Int64(random.next() % UInt64(ZoneOffsets.span.upperBound - ZoneOffsets.span.lowerBound))
            }
            var at = Date(timeIntervalSince1970: 0)
            while let next = zone.nextDaylightSavingTimeTransition(after: at), next.timeIntervalSince1970 < 2_000_000_000 {
                let change = Int64(next.timeIntervalSince1970)
                instants += [change - 1, change, change + 1]
                at = next
            }
            for instant in instants {
                let foundation = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
                #expect(table.offset(at: instant) == foundation, "\(name) at \(instant)")
                checked += 1
            }
        }
        #expect(checked > Self.zones.count * 2_000)
    }

    /// Reads `zone local-seconds` lines; writes `instant kind` lines, by `zoneinfo` with fold=0.
    static let oracle = """
        import sys
        from datetime import datetime, timedelta, timezone
        from zoneinfo import ZoneInfo
        epoch = datetime(1970, 1, 1)
        out = []
        for line in sys.stdin.read().split("\\n"):
            name, local = line.split()
            zone = ZoneInfo(name)
            wall = epoch + timedelta(seconds=int(local))
            first = wall.replace(tzinfo=zone, fold=0)
            second = wall.replace(tzinfo=zone, fold=1)
            if first.utcoffset() == second.utcoffset():
                kind = "unique"
            elif first.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None) != wall:
                kind = "skipped"
            else:
                kind = "repeated"
            out.append(f"{int(first.timestamp())} {kind}")
        print("\\n".join(out))
        """
}
