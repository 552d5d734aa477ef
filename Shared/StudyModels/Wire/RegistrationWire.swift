/// Replies of the registration server's account calls (`/fdahpUserRegWS/<name>.api`). Every
/// success is a JSON object with `"message": "success"` (lower case, as the original).

public struct RegistrationSuccess: Codable, Sendable, Equatable {
    public var message = "success"
    public init() {}
}

/// `register.api` and `login.api`: the apps force-unwrap `userId`, `verified` and `auth`.
public struct SessionReply: Codable, Sendable, Equatable {
    public var message = "success"
    public var userId: String
    public var verified: Bool
    public var auth: String
    public var refreshToken: String
    /// Login only: the password is temporary or older than the expiry; the app asks for a new one.
    public var resetPassword: Bool?

    public init(userId: String, verified: Bool, auth: String, refreshToken: String, resetPassword: Bool? = nil) {
        self.userId = userId
        self.verified = verified
        self.auth = auth
        self.refreshToken = refreshToken
        self.resetPassword = resetPassword
    }
}

/// `confirmRegistration.api`.
public struct VerifiedReply: Codable, Sendable, Equatable {
    public var message = "success"
    public var verified: Bool

    public init(verified: Bool) { self.verified = verified }
}
