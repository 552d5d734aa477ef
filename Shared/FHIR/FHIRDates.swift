/// The app's date and time texts as FHIR's `date`, `dateTime` and `time`.
///
/// The MyStudies apps write dates as `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (offset `+0000`, no colon),
/// plain days as `yyyy-MM-dd`, times of day as `HH:mm:ss`; FHIR wants the offset with a colon.
/// Anything else is not converted (nil), never guessed at.
public enum FHIRDates {
    /// A FHIR `dateTime` (`2026-03-01T08:00:00.000+01:00`) or `date` (`2026-03-01`).
    public static func dateTime(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.count == 10 { return isDay(bytes) ? text : nil }
        guard bytes.count >= 20, isDay(Array(bytes[0..<10])), bytes[10] == UInt8(ascii: "T"),
            isTime(Array(bytes[11..<19]))
        else { return nil }
        var rest = Array(bytes[19...])
        var fraction: [UInt8] = []
        if rest.first == UInt8(ascii: ".") {
            let digits = rest.dropFirst().prefix { isDigit($0) }
            guard (1...9).contains(digits.count) else { return nil }
            fraction = [UInt8(ascii: ".")] + digits
            rest = Array(rest.dropFirst(1 + digits.count))
        }
        let zone: [UInt8]
        switch rest.count {
        case 1 where rest[0] == UInt8(ascii: "Z"): zone = rest
        case 5 where isSign(rest[0]) && rest[1...].allSatisfy(isDigit):
            zone = [rest[0], rest[1], rest[2], UInt8(ascii: ":"), rest[3], rest[4]]
        case 6 where isSign(rest[0]) && rest[3] == UInt8(ascii: ":") && [rest[1], rest[2], rest[4], rest[5]].allSatisfy(isDigit):
            zone = rest
        default: return nil
        }
        let hours = Int(zone.count == 6 ? (zone[1] - 48) * 10 + (zone[2] - 48) : 0)
        let minutes = Int(zone.count == 6 ? (zone[4] - 48) * 10 + (zone[5] - 48) : 0)
        guard hours <= 14, minutes < 60 else { return nil }
        return String(decoding: Array(bytes[0..<19]) + fraction + zone, as: UTF8.self)
    }

    /// The day of a `dateTime` text (`2026-03-01`), for a question that asks for a date.
    public static func day(_ text: String) -> String? {
        guard let converted = dateTime(text) else { return nil }
        return String(converted.prefix(10))
    }

    /// A FHIR `time` (`22:45:00`) from `HH:mm:ss` or `HH:mm`.
    public static func time(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.count == 5 { return isTime(bytes + Array(":00".utf8)) ? text + ":00" : nil }
        return bytes.count == 8 && isTime(bytes) ? text : nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    private static func isSign(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    private static func isDay(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
            year >= 1, (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    private static func isTime(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 8, bytes[2] == UInt8(ascii: ":"), bytes[5] == UInt8(ascii: ":"),
            let hour = number(bytes[0..<2]), let minute = number(bytes[3..<5]), let second = number(bytes[6..<8])
        else { return false }
        return hour < 24 && minute < 60 && second < 60
    }
}
