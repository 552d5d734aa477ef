import Foundation

/// A participant account as the stores read it.
package struct Participant: Sendable {
    package var userId: UUID
    package var appId: String
    package var orgId: String
    package var email: String
    package var passwordHash: String
    package var passwordChangedAt: Date
    package var tempPasswordHash: String?
    package var tempPasswordExpiresAt: Date?
    package var verified: Bool
    package var codeHash: String?
    package var codeExpiresAt: Date?
    package var firstName: String
    package var lastName: String
    /// Set while an admin has disabled the account.
    package var disabledAt: Date?

    package init(
        userId: UUID, appId: String, orgId: String, email: String, passwordHash: String, passwordChangedAt: Date,
        tempPasswordHash: String? = nil, tempPasswordExpiresAt: Date? = nil, verified: Bool = false, codeHash: String? = nil,
        codeExpiresAt: Date? = nil, firstName: String = "", lastName: String = "", disabledAt: Date? = nil
    ) {
        self.userId = userId
        self.appId = appId
        self.orgId = orgId
        self.email = email
        self.passwordHash = passwordHash
        self.passwordChangedAt = passwordChangedAt
        self.tempPasswordHash = tempPasswordHash
        self.tempPasswordExpiresAt = tempPasswordExpiresAt
        self.verified = verified
        self.codeHash = codeHash
        self.codeExpiresAt = codeExpiresAt
        self.firstName = firstName
        self.lastName = lastName
        self.disabledAt = disabledAt
    }
}

/// How e-mail addresses are compared: trimmed and case-folded (addresses are case-insensitive in
/// practice, and the apps send what people type).
package enum EmailKey {
    package static func of(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
