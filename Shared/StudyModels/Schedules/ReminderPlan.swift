import Foundation

/// When a participant is reminded of a run that is due and not done (docs/schedules.md,
/// Reminders): `afterMinutes` after it opens, plus its draw of `randomMinutes`, moved to the end
/// of the quiet hours in the participant's zone when it falls in them; never once the run closed.
public enum ReminderPlan {
    public static func time(for run: ActivityRun, reminder: ActivityReminder, zone: TimeZone, participant: String) -> Date? {
        let spread = reminder.randomMinutes.map { draw(participant: participant, run: run, upTo: $0) } ?? 0
        // The validator bounds both; a stored document checked before it did is clamped here.
        let minutes = min(max(reminder.afterMinutes, 0), ActivityReminder.afterMinutesRange.upperBound) + spread
        var at = run.start.addingTimeInterval(Double(minutes) * 60)
        switch quietEnd(at, reminder: reminder, zone: zone) {
        case .some(.some(let end)): at = end
        case .some(nil): return nil
        case nil: break
        }
        if let end = run.end, at > end { return nil }
        return at
    }

    /// When the quiet hours `instant` falls in end, on the participant's clock: nil when it falls
    /// in none; `.some(nil)` when their end cannot be found (a zone past any date). The reminder
    /// sweep asks again when it sends, as a reminder planned for before now is sent late.
    public static func quietEnd(_ instant: Date, reminder: ActivityReminder, zone: TimeZone) -> Date?? {
        quietEnd(instant, from: reminder.quietFrom, until: reminder.quietUntil, zone: zone)
    }

    /// The same for quiet hours given as `HH:mm` texts (a consent reminder's).
    public static func quietEnd(_ instant: Date, from quietFrom: String?, until quietUntil: String?, zone: TimeZone) -> Date?? {
        guard let from = quietFrom.flatMap(LocalTimes.time), let until = quietUntil.flatMap(LocalTimes.time),
            from != until, let clock = WallClock(instant, in: zone)
        else { return nil }
        let second = clock.seconds
        let quiet = from < until ? (from..<until).contains(second) : (second >= from || second < until)
        guard quiet else { return nil }
        // Quiet hours across midnight that began this evening end tomorrow morning.
        let day = from > until && second >= from ? clock.day + 1 : clock.day
        return .some(WallClock(day: day, seconds: until).instant(in: zone))
    }

    /// A participant's draw for a run, 0 to `upTo` minutes: the same on every replica and every
    /// time (FNV-1a over who, which activity and which run; Swift's `Hasher` is seeded per process).
    public static func draw(participant: String, run: ActivityRun, upTo: Int) -> Int {
        let bound = min(max(upTo, 0), ActivityReminder.randomMinutesRange.upperBound)
        guard bound > 0 else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(participant)\u{1F}\(run.activityId)\u{1F}\(run.runId)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(bound + 1))
    }
}
