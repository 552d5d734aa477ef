/// Whole numbers from outside (a query parameter, a form field, a path segment, a document's
/// value), read within the bounds their caller states.
///
/// Swift traps on arithmetic that overflows, on a range whose lower bound is above its upper one
/// and on `Int(_: Double)` of a value out of range, and a trap ends the process with every
/// participant's requests in it. So a number from outside is bounded where it is parsed, before
/// any arithmetic or range sees it; the bounds each input has are listed in docs/security.md
/// (Numbers from outside).
public enum WholeNumber {
    /// `text` as a decimal whole number within `range`; nil for anything else (a sign is allowed).
    public static func parse(_ text: some StringProtocol, in range: ClosedRange<Int>) -> Int? {
        // Longer than any Int's decimal form: refused before it is read.
        guard text.utf8.count <= 20, let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    /// `text` as a decimal whole number within `range`, for 64-bit identifiers.
    public static func parse(_ text: some StringProtocol, in range: ClosedRange<Int64>) -> Int64? {
        guard text.utf8.count <= 20, let value = Int64(text), range.contains(value) else { return nil }
        return value
    }

    /// `value` when it is a whole number within `range`; nil for fractions, NaN, the infinities
    /// and anything out of range, on which `Int(_:)` traps.
    public static func exactly(_ value: Double, in range: ClosedRange<Int>) -> Int? {
        guard value.isFinite, value.rounded() == value, value >= Double(range.lowerBound), value <= Double(range.upperBound)
        else { return nil }
        // Double(Int.max) rounds up past Int.max: `Int(exactly:)` refuses that one value too.
        return Int(exactly: value)
    }

    /// `value` rounded to the nearest whole number within `range`; nil when it is not finite or
    /// lies outside.
    public static func rounded(_ value: Double, in range: ClosedRange<Int>) -> Int? {
        guard value.isFinite else { return nil }
        return exactly(value.rounded(), in: range)
    }

    /// The largest whole number a JSON number carries exactly (2^53): identifiers and counts
    /// beyond it have already lost digits in a JavaScript client.
    public static let maxExactInJSON = 9_007_199_254_740_992
}

/// The largest and smallest values a study document's numbers may take. Each is far past what
/// a study uses; a number beyond it is a typo or an attack, and refusing it where the document
/// is checked keeps the arithmetic that schedules and formats do on these numbers from
/// overflowing (docs/security.md, Numbers from outside).
public enum DocumentBounds {
    /// Days relative to an anchor date (`startDays`, `endDays`, `anchorDays`, anchor runs):
    /// ten years either side.
    public static let anchorDays = -3_660...3_660
    /// Weeks or months a weekly or monthly schedule repeats.
    public static let repeatCount = 1...1_000
    /// How long a run stays open: up to a year, in milliseconds.
    public static let expiresAfterMilliseconds = 1...31_622_400_000
    /// A text answer's longest length (0: no limit).
    public static let maxLength = 0...1_000_000
    /// Decimal places of a continuous scale.
    public static let fractionDigits = 0...10
    /// An active task's counts and spans.
    public static let taskCount = 1...10_000
    /// Activities in one study: the largest studies have dozens; a participant's timeline expands
    /// them all together.
    public static let maxActivities = 500
    /// Steps in one activity, a form's questions counted with the form: the longest surveys have
    /// a few hundred.
    public static let maxStepsPerActivity = 2_000
    /// A daily activity's windows a day: one every half hour. Each is a run for every
    /// participant every day, so the count is bounded where the schedule is read.
    public static let maxDailyTimes = 48
    /// WCP's limits on its basic information: a descriptive name of 150 characters, a support
    /// address of 100; data partners are organisations' names.
    public static let fullName = 150
    public static let supportEmail = 100
    public static let dataPartners = 20
    public static let dataPartnerName = 100
}
