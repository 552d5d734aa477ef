import Foundation

/// Enrollment tokens in the original's format (docs/response-api.md, Enrollment tokens): eight letters
/// A-Z and a Luhn mod 26 check letter. Unlike the original (java.util.Random) they come from the
/// system CSPRNG. Input is trimmed and upper-cased; as in the original, validation checks only
/// the alphabet and the checksum, not the length.
package enum EnrollmentToken {
    package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)
    package static let randomLength = 8

    /// What a participant typed, as the original bound it: trimmed, upper-cased, nil when blank.
    package static func normalized(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed.uppercased()
    }

    /// A fresh token: eight random letters and their check letter.
    package static func generate<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        var prefix = String.UnicodeScalarView()
        for _ in 0..<randomLength {
            prefix.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
        }
        let text = String(prefix)
        // Every letter is the alphabet's, so the check letter is always there.
        return text + (checkLetter(for: text).map { String($0) } ?? "")
    }

    /// The Luhn mod 26 check letter for `prefix`; nil when a character is outside A-Z.
    package static func checkLetter(for prefix: String) -> Character? {
        guard let sum = luhnSum(prefix, startFactor: 2) else { return nil }
        return Character(alphabet[(26 - sum % 26) % 26])
    }

    /// Whether `token` (already normalised) is non-empty, A-Z only, and its checksum holds.
    package static func isValid(_ token: String) -> Bool {
        guard !token.isEmpty, let sum = luhnSum(token, startFactor: 1) else { return false }
        return sum % 26 == 0
    }

    /// Right to left, alternating factors from `startFactor`; each product contributes its base-26
    /// digits. nil when a character is not a letter A-Z.
    private static func luhnSum(_ text: String, startFactor: Int) -> Int? {
        var sum = 0
        var factor = startFactor
        for scalar in text.unicodeScalars.reversed() {
            guard scalar.value >= 65, scalar.value <= 90 else { return nil }
            let product = factor * Int(scalar.value - 65)
            sum += product / 26 + product % 26
            factor = factor == 2 ? 1 : 2
        }
        return sum
    }
}
