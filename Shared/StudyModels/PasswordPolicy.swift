/// The password rule of the MyStudies servers, enforced by StudyStack on the server: 8 to 64
/// characters with an upper-case letter, a lower-case letter, a digit and a special character,
/// and no whitespace or control characters (a NUL would end the password for bcrypt).
public enum PasswordPolicy {
    public static let description =
        "a password needs 8 to 64 characters, with an upper-case letter, a lower-case letter, a digit and a special character, and no spaces"

    /// Nil when `password` satisfies the policy, otherwise what is missing.
    public static func problem(with password: String) -> String? {
        guard (8...64).contains(password.count) else { return description }
        var upper = false, lower = false, digit = false, special = false
        for character in password {
            if character.isWhitespace || character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return description
            }
            if character.isUppercase {
                upper = true
            } else if character.isLowercase {
                lower = true
            } else if character.isNumber {
                digit = true
            } else {
                special = true
            }
        }
        return upper && lower && digit && special ? nil : description
    }
}
