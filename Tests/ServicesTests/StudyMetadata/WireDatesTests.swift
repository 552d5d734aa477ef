import Foundation
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import Testing

/// The apps' timestamp format, computed without DateFormatter, agrees with DateFormatter.
@Suite struct WireDatesTests {
    @Test(arguments: ["America/New_York", "Europe/Berlin", "Asia/Kolkata", "Pacific/Chatham", "UTC", "America/St_Johns"])
    func agreesWithFoundationAcrossYearsAndDSTChanges(_ zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            // 1950 to 2100, with milliseconds.
            let instant = Date(timeIntervalSince1970: Double(Int64.random(in: -631_152_000_000...4_102_444_800_000, using: &generator)) / 1000)
            #expect(WireDates.format(instant, in: zone) == formatter.string(from: instant), "\(instant)")
        }
    }

    @Test func localTimesBecomeInstantsWithTheirOwnOffset() {
        #expect(WireDates.format(date: "2027-01-04", time: "08:00", in: "America/New_York") == "2027-01-04T08:00:00.000-0500")
        #expect(WireDates.format(date: "2027-03-28", time: "23:59:59", in: "America/New_York") == "2027-03-28T23:59:59.000-0400")
        #expect(WireDates.format(date: "2027-07-01", time: "09:30", in: "Asia/Kolkata") == "2027-07-01T09:30:00.000+0530")
        #expect(WireDates.format(date: "2027-02-30", time: "09:30", in: "UTC") == nil)
        #expect(WireDates.version(fromLabel: "1.10") == 11)
        #expect(WireDates.version(fromLabel: "2.0") == nil)
    }
}
