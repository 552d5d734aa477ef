import Foundation

/// A participant account as the stores read it.
struct Participant: Sendable {
    var userId: UUID
    var appId: String
    var orgId: String
    var email: String
    var passwordHash: String
    var passwordChangedAt: Date
    var tempPasswordHash: String?
    var tempPasswordExpiresAt: Date?
    var verified: Bool
    var codeHash: String?
    var codeExpiresAt: Date?
    var firstName: String
    var lastName: String
}

/// How e-mail addresses are compared: trimmed and case-folded (addresses are case-insensitive in
/// practice, and the apps send what people type).
enum EmailKey {
    static func of(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
