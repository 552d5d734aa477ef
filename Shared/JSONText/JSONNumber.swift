import Foundation

/// A JSON number: its nearest `Double`, for arithmetic and storage, and its exact decimal value,
/// as the text that was parsed wrote it (RFC 8259 numbers are decimals of any precision). Two
/// numbers are equal, ordered and hashed by the exact decimal, so `9007199254740993` is more than
/// `9007199254740992` although both are the same `Double`, and `1.0` equals `1`; a number built
/// from a `Double` in code is the shortest decimal that reads back as it.
///
/// As small as a `Double` and a reference: a `JSONValue` is held on the stack at every level of a
/// document as deep as the parser allows, so the exact decimal is kept (boxed) only for the rare
/// number a double does not hold as written, and worked out from the double otherwise.
public struct JSONNumber: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let double: Double
    private let written: Written?

    /// The decimal as written, for a number the double does not hold.
    private final class Written: Sendable {
        let decimal: ExactDecimal
        init(_ decimal: ExactDecimal) { self.decimal = decimal }
    }

    public init(_ double: Double) {
        self.double = double
        written = nil
    }

    /// From JSON number text; nil when the text is not one or is beyond a `Double`'s range.
    public init?(text: some StringProtocol) {
        guard let double = Double(text), double.isFinite, ExactDecimal(text) != nil else { return nil }
        self.init(checkedText: String(text), double: double)
    }

    /// From text the parser checked, and its double.
    init(checkedText text: String, double: Double) {
        self.double = double
        // Up to 15 digits and no exponent: the double's shortest form gives the same decimal back
        // (a double keeps 15 significant decimal digits), so nothing needs keeping.
        let utf8 = text.utf8
        if utf8.count <= 17, !utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
            utf8.count(where: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) <= 15
        {
            written = nil
            return
        }
        let decimal = ExactDecimal(text) ?? ExactDecimal(double)
        written = decimal == ExactDecimal(double) ? nil : Written(decimal)
    }

    /// Whether the `Double` holds the decimal as written (false for `9007199254740993`, or for a
    /// fraction written with more digits than a double keeps).
    public var isExactDouble: Bool { written == nil }

    /// The exact decimal value.
    public var decimal: ExactDecimal { written?.decimal ?? ExactDecimal(double) }

    /// The decimal text, as short as it can be written.
    public var description: String { decimal.description }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if lhs.written == nil, rhs.written == nil { return lhs.double == rhs.double }
        return lhs.decimal == rhs.decimal
    }

    /// A number the double holds is never equal to one it does not (their decimals differ), so
    /// each kind hashes its own way and the cheap way where it can.
    public func hash(into hasher: inout Hasher) {
        if let written { hasher.combine(written.decimal) } else { hasher.combine(double) }
    }

    /// Whether it is a whole number (`1.0` and `1e2` are). For a number the double holds, the
    /// double says: below 2^53 a double with a fraction has a shortest form with one too, and
    /// every double above is whole.
    public var isWhole: Bool {
        if let written { return written.decimal.isWhole }
        return double.rounded(.towardZero) == double
    }

    /// Whether it divided by `divisor` is a whole number, exactly. Two whole numbers a double
    /// holds exactly are divided in binary (`fmod` is exact); anything else as decimals.
    public func isMultiple(of divisor: JSONNumber) -> Bool {
        if written == nil, divisor.written == nil, isWhole, divisor.isWhole, abs(double) < 0x1p53, abs(divisor.double) < 0x1p53,
            divisor.double != 0
        {
            return fmod(double, divisor.double) == 0
        }
        return decimal.isMultiple(of: divisor.decimal)
    }

    public static func < (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if lhs.written == nil, rhs.written == nil { return lhs.double < rhs.double }
        return lhs.decimal < rhs.decimal
    }
}

/// A decimal number exactly: a sign, its significant digits without leading or trailing zeros, and
/// the power of ten of the last digit (`12.50` is `+ [1,2,5] × 10^-1`). Built from JSON number text
/// of any length (the parser's byte budget bounds it), compared and divided without rounding.
public struct ExactDecimal: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let negative: Bool
    /// Significant digits, 0 to 9 each; empty for zero.
    public let digits: [UInt8]
    public let exponent: Int

    public static let zero = ExactDecimal(negative: false, digits: [], exponent: 0)

    /// A finite double as its shortest round-tripping decimal (its `description`).
    public init(_ double: Double) {
        self = ExactDecimal(double.description) ?? .zero
    }

    init(negative: Bool, digits: [UInt8], exponent: Int) {
        // Canonical: no leading or trailing zeros, zero unsigned.
        var digits = digits[...]
        var exponent = exponent
        while digits.first == 0 { digits.removeFirst() }
        while digits.last == 0 { digits.removeLast(); exponent += 1 }
        self.digits = Array(digits)
        self.negative = digits.isEmpty ? false : negative
        self.exponent = digits.isEmpty ? 0 : exponent
    }

    /// From JSON number text (`-`? digits (`.` digits)? (`e` sign? digits)?); nil for anything
    /// else, or an exponent past ±10^9 (no such number reaches here: the parser refuses what a
    /// `Double` cannot hold).
    public init?(_ text: some StringProtocol) {
        var bytes = Array(text.utf8)[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes.removeFirst() }
        var digits: [UInt8] = []
        var exponent = 0
        var sawDigit = false
        while let byte = bytes.first, (48...57).contains(byte) {
            digits.append(byte - 48)
            sawDigit = true
            bytes.removeFirst()
        }
        guard sawDigit else { return nil }
        if bytes.first == UInt8(ascii: ".") {
            bytes.removeFirst()
            var fraction = false
            while let byte = bytes.first, (48...57).contains(byte) {
                digits.append(byte - 48)
                exponent -= 1
                fraction = true
                bytes.removeFirst()
            }
            guard fraction else { return nil }
        }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes.removeFirst()
            let minus = bytes.first == UInt8(ascii: "-")
            if minus || bytes.first == UInt8(ascii: "+") { bytes.removeFirst() }
            var written = 0
            var any = false
            while let byte = bytes.first, (48...57).contains(byte) {
                guard written < 1_000_000_000 else { return nil }
                written = written * 10 + Int(byte - 48)
                any = true
                bytes.removeFirst()
            }
            guard any else { return nil }
            exponent += minus ? -written : written
        }
        guard bytes.isEmpty else { return nil }
        self.init(negative: negative, digits: digits, exponent: exponent)
    }

    public var isZero: Bool { digits.isEmpty }
    /// Whether it is a whole number (`1.0` and `1e2` are).
    public var isWhole: Bool { exponent >= 0 }

    /// The power of ten just above the number's magnitude (`123` → 3, `0.05` → -1): numbers are
    /// ordered by it first.
    private var magnitude: Int { digits.count + exponent }

    public static func < (lhs: ExactDecimal, rhs: ExactDecimal) -> Bool {
        if lhs.negative != rhs.negative { return lhs.negative }
        let lessInSize = lhs.isSmallerInSize(than: rhs)
        return lhs.negative ? rhs.isSmallerInSize(than: lhs) : lessInSize
    }

    /// |self| < |other|.
    private func isSmallerInSize(than other: ExactDecimal) -> Bool {
        if isZero || other.isZero { return isZero && !other.isZero }
        if magnitude != other.magnitude { return magnitude < other.magnitude }
        // Same magnitude: the digits compared from the first, a shorter run padded with zeros.
        for index in 0..<max(digits.count, other.digits.count) {
            let mine = index < digits.count ? digits[index] : 0
            let theirs = index < other.digits.count ? other.digits[index] : 0
            if mine != theirs { return mine < theirs }
        }
        return false
    }

    /// Whether `self` divided by `divisor` is a whole number, exactly (JSON Schema's `multipleOf`).
    /// With each written as digits × 10^exponent (digits without trailing zeros), the quotient is
    /// whole only when the dividend's exponent is at least the divisor's and the dividend's digits
    /// followed by the difference in zeros are a multiple of the divisor's digits.
    public func isMultiple(of divisor: ExactDecimal) -> Bool {
        guard !divisor.isZero else { return false }
        if isZero { return true }
        guard exponent >= divisor.exponent else { return false }
        let zeros = exponent - divisor.exponent
        var remainder: [UInt8] = []
        func push(_ digit: UInt8) {
            // remainder = (remainder × 10 + digit) mod divisor, by repeated subtraction (at most 9).
            remainder.append(digit)
            while let first = remainder.first, first == 0 { remainder.removeFirst() }
            while !Self.isLess(remainder, divisor.digits) { remainder = Self.subtract(remainder, divisor.digits) }
        }
        for digit in digits { push(digit) }
        for _ in 0..<zeros {
            push(0)
            // A remainder of zero stays zero however many zeros follow.
            if remainder.isEmpty { return true }
        }
        return remainder.isEmpty
    }

    /// Digits compared as whole numbers (no leading zeros in either).
    private static func isLess(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        if lhs.count != rhs.count { return lhs.count < rhs.count }
        return lhs.lexicographicallyPrecedes(rhs)
    }

    /// lhs − rhs for lhs ≥ rhs, without leading zeros.
    private static func subtract(_ lhs: [UInt8], _ rhs: [UInt8]) -> [UInt8] {
        var result = lhs
        var borrow: UInt8 = 0
        for offset in 0..<result.count {
            let index = result.count - 1 - offset
            let take = (offset < rhs.count ? rhs[rhs.count - 1 - offset] : 0) + borrow
            if result[index] >= take {
                result[index] -= take
                borrow = 0
            } else {
                result[index] = result[index] + 10 - take
                borrow = 1
            }
        }
        while let first = result.first, first == 0 { result.removeFirst() }
        return result
    }

    public var description: String {
        guard !isZero else { return "0" }
        let text = String(decoding: digits.map { $0 + 48 }, as: UTF8.self)
        let sign = negative ? "-" : ""
        if exponent >= 0, exponent <= 21 { return sign + text + String(repeating: "0", count: exponent) }
        if exponent < 0, -exponent < digits.count { return sign + text.dropLast(-exponent) + "." + text.suffix(-exponent) }
        if exponent < 0, magnitude > -7 { return sign + "0." + String(repeating: "0", count: -magnitude) + text }
        let rest = digits.count > 1 ? "." + text.dropFirst() : ""
        return sign + text.prefix(1) + rest + "e\(magnitude - 1)"
    }
}

extension JSONValue {
    /// A number built in code from a `Double` (the shortest decimal that reads back as it).
    public static func number(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }
}
