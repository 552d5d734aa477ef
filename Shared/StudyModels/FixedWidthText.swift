/// A time written at fixed positions (`yyyy-MM-dd`, `HH:mm:ss`, digits of a set width), read
/// byte by byte. The apps' dates and registration's RFC 3339 times are read here by the thousand
/// a second, where a `Calendar` or a formatter cost more than everything else around them. Every
/// read is of positions the caller has already checked are inside the text; anything that is not
/// the expected digit or separator reads as nil.
struct FixedWidthText {
    let bytes: UnsafeBufferPointer<UInt8>

    /// The decimal number of `count` digits from `start`; nil unless every byte is `0`-`9`.
    func digits(_ start: Int, _ count: Int) -> Int? {
        var value = 0
        for index in start..<start + count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// Whether the byte at `index` is `ascii`, or `other` when one is given. (Not variadic: a
    /// variadic list is an array made on every call, and this runs sixty times a response.)
    func byte(_ index: Int, is ascii: Unicode.Scalar, or other: Unicode.Scalar? = nil) -> Bool {
        let byte = bytes[index]
        return byte == UInt8(ascii: ascii) || other.map { byte == UInt8(ascii: $0) } == true
    }

    /// The date `yyyy-MM-dd` at `start` as days since 1970-01-01; nil unless it is a date of the
    /// proleptic Gregorian calendar from year 1.
    func day(at start: Int) -> Int? {
        guard let year = digits(start, 4), byte(start + 4, is: "-"), let month = digits(start + 5, 2), byte(start + 7, is: "-"),
            let day = digits(start + 8, 2), year >= 1, (1...12).contains(month), day >= 1,
            day <= GregorianDays.days(inMonth: month, year: year)
        else { return nil }
        return GregorianDays.days(year: year, month: month, day: day)
    }

    /// The time of day `HH:mm:ss` at `start` in seconds; nil unless it is one (no leap second).
    func secondOfDay(at start: Int) -> Int? {
        guard let hour = digits(start, 2), byte(start + 2, is: ":"), let minute = digits(start + 3, 2), byte(start + 5, is: ":"),
            let second = digits(start + 6, 2), hour < 24, minute < 60, second < 60
        else { return nil }
        return hour * 3_600 + minute * 60 + second
    }

    /// An offset `±HHmm` (or `±HH:mm` with `colon`) at `start`, in minutes east of UTC.
    func offsetMinutes(at start: Int, colon: Bool) -> Int? {
        let minutesAt = start + (colon ? 4 : 3)
        guard byte(start, is: "+", or: "-"), let hours = digits(start + 1, 2), !colon || byte(start + 3, is: ":"),
            let minutes = digits(minutesAt, 2), hours < 24, minutes < 60
        else { return nil }
        return (hours * 60 + minutes) * (byte(start, is: "-") ? -1 : 1)
    }

    /// `body` over the UTF-8 of `text`, read as fixed-width text.
    static func read<Result>(_ text: String, _ body: (FixedWidthText) -> Result?) -> Result? {
        var text = text
        return text.withUTF8 { body(FixedWidthText(bytes: $0)) }
    }
}
