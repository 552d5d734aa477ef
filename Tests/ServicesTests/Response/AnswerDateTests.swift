import Foundation
import ResponseCore
import StudyModels
import Testing

/// `ResponseShredder.answerDateAndOffset` counts days itself instead of asking a `Calendar`; it
/// must read exactly what the calendar read from the Gregorian reform (1582-10-15) on: the same
/// instants, the same offsets, the same refusals. Before it, Foundation's Gregorian calendar
/// switches to the Julian one, so "0001-01-08" was stored as 0001-01-06; ISO 8601 and
/// PostgreSQL count the Gregorian calendar backwards (proleptic), and so does the shredder now.
@Suite struct AnswerDateTests {
    /// The calendar's reading, as the shredder did it before: the reference.
    static func calendarReading(_ text: String) -> (Date, Int)? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.allSatisfy(\.isASCII) else { return nil }
        let characters = scalars.map(Character.init)
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= characters.count else { return nil }
            return characters[range].allSatisfy(\.isWholeNumber) ? Int(String(characters[range])) : nil
        }
        func char(_ index: Int, _ expected: Character) -> Bool { index < characters.count && characters[index] == expected }
        guard let year = digits(0..<4), char(4, "-"), let month = digits(5..<7), char(7, "-"), let day = digits(8..<10) else { return nil }
        var components = DateComponents(calendar: Calendar(identifier: .gregorian), year: year, month: month, day: day)
        var offset = 0
        if characters.count == 10 {
            components.timeZone = TimeZone(identifier: "UTC")
        } else {
            guard characters.count == 28, char(10, "T"), let hour = digits(11..<13), char(13, ":"), let minute = digits(14..<16),
                char(16, ":"), let second = digits(17..<19), char(19, "."), let millis = digits(20..<23),
                char(23, "+") || char(23, "-"), let offsetHours = digits(24..<26), let offsetMinutes = digits(26..<28),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offset = (offsetHours * 60 + offsetMinutes) * (char(23, "-") ? -1 : 1)
            components.timeZone = TimeZone(secondsFromGMT: offset * 60)
            (components.hour, components.minute, components.second) = (hour, minute, second)
            components.nanosecond = millis * 1_000_000
        }
        guard components.isValidDate, let date = components.date else { return nil }
        return (date, offset)
    }

    /// As the instant is written to PostgreSQL.
    static func formatted(_ date: Date) -> String { GregorianDays.text(date) }

    func expectSameReading(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let reading = ResponseShredder.answerDateAndOffset(text)
        let reference = Self.calendarReading(text)
        #expect((reading == nil) == (reference == nil), "\(text)", sourceLocation: sourceLocation)
        guard let reading, let reference else { return }
        #expect(reading.offsetMinutes == reference.1, "\(text)", sourceLocation: sourceLocation)
        // The instant to the millisecond, as it is written to PostgreSQL.
        #expect(Self.formatted(reading.date) == Self.formatted(reference.0), "\(text)", sourceLocation: sourceLocation)
        #expect(abs(reading.date.timeIntervalSince(reference.0)) < 0.000_1, "\(text)", sourceLocation: sourceLocation)
    }

    @Test func everyDayOfTheYearsAroundEachRuleReadsAsTheCalendarReadIt() {
        var checked = 0
        for year in [1583, 1584, 1600, 1899, 1900, 1969, 1970, 1971, 2000, 2023, 2024, 2100, 2400, 9999] {
            for month in 0...13 {
                for day in 0...32 {
                    let date = String(format: "%04d-%02d-%02d", year, month, day)
                    expectSameReading(date)
                    expectSameReading(date + "T23:59:59.999+1400")
                    checked += 2
                }
            }
        }
        #expect(checked == 14 * 14 * 33 * 2)
    }

    @Test func timesOffsetsAndRefusalsReadAsTheCalendarReadThem() {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        for _ in 0..<2_000 {
            let text = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d%@%02d%02d", Int.random(in: 1583...9999, using: &generator),
                Int.random(in: 1...12, using: &generator), Int.random(in: 1...28, using: &generator), Int.random(in: 0...23, using: &generator),
                Int.random(in: 0...59, using: &generator), Int.random(in: 0...59, using: &generator),
                Int.random(in: 0...999, using: &generator), Bool.random(using: &generator) ? "+" : "-",
                Int.random(in: 0...14, using: &generator), [0, 30, 45].randomElement(using: &generator)!)
            expectSameReading(text)
            checked += 1
        }
        #expect(checked == 2_000)
        for text in [
            "0000-01-01", "2030-01-05", "2030-01-05T08:00:00.000-0500", "2030-01-05T24:00:00.000+0000",
            "2030-01-05T23:60:00.000+0000", "2030-01-05T23:59:60.000+0000", "2030-01-05T08:00:00.000+2400",
            "2030-01-05T08:00:00.000+0060", "2030-01-05T08:00:00.000Z", "2030-01-05T08:00:00+0000", "2030-1-05",
            "2030-01-05 08:00:00.000+0000", "2030-01-05T08:00:00.0000+000", "２０３０-01-05", "2030-01-05T08:00:00.000+00:0",
            "", "2030", "-030-01-05", "2030-02-29", "2032-02-29", "1900-02-29", "2000-02-29", "abcd-ef-gh",
        ] {
            expectSameReading(text)
        }
        #expect(ResponseShredder.answerDateAndOffset("2030-01-05T08:00:00.000-0500")?.offsetMinutes == -300)
        // Before the reform, the proleptic calendar: PostgreSQL's epoch of 0001-01-01 00:00 UTC,
        // and a leap day only the Julian calendar has is refused.
        #expect(ResponseShredder.answerDateAndOffset("0001-01-01")?.date.timeIntervalSince1970 == -62_135_596_800)
        #expect(Self.formatted(ResponseShredder.answerDateAndOffset("0001-01-08")!.date) == "0001-01-08T00:00:00.000Z")
        #expect(ResponseShredder.answerDateAndOffset("1500-02-29") == nil)
        #expect(ResponseShredder.answerDateAndOffset("1582-10-10") != nil)
    }

    @Test func instantsAreWrittenToTheNearestMillisecondOnEitherSideOf1970() {
        let cases: [(Double, String)] = [
            (0, "1970-01-01T00:00:00.000Z"), (-0.001, "1969-12-31T23:59:59.999Z"), (4.046, "1970-01-01T00:00:04.046Z"),
            (-62_135_596_800, "0001-01-01T00:00:00.000Z"), (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
            (951_782_400, "2000-02-29T00:00:00.000Z"), (1_893_801_604.045_999_9, "2030-01-05T00:00:04.046Z"),
        ]
        for (seconds, text) in cases {
            #expect(GregorianDays.text(Date(timeIntervalSince1970: seconds)) == text)
        }
        // Every day of four centuries both ways.
        var days = 0
        for day in GregorianDays.days(year: 1800, month: 1, day: 1)..<GregorianDays.days(year: 2200, month: 1, day: 1) {
            let (year, month, dayOfMonth) = GregorianDays.civil(days: day)
            #expect(GregorianDays.days(year: year, month: month, day: dayOfMonth) == day)
            days += 1
        }
        #expect(days == 146_097)
        #expect(Self.formatted(ResponseShredder.answerDateAndOffset("2030-01-05T08:00:00.123-0500")!.date) == "2030-01-05T13:00:00.123Z")
    }
}
