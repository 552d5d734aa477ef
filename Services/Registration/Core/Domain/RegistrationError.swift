/// What can go wrong in a participant's account, study or session, with the sentence the apps
/// show the participant. The HTTP target answers each with its status (`RegistrationError+API`).
package enum RegistrationError: Error, Sendable, Equatable {
    /// Input the rules refuse; the message says which rule.
    case invalid(String)
    /// The session is unknown or expired: the apps refresh it.
    case sessionExpired
    case wrongCredentials
    /// Too many failed sign-ins; the lock lifts after `minutes`.
    case locked(minutes: Int)
    /// The session belongs to another participant than the call names.
    case notYourSession
    case codeExpired
    case alreadyVerified
    case notVerified
    case invalidRefreshToken
    /// Over the per-minute allowance.
    case tooMany
    /// An admin disabled the account.
    case disabled

    package var message: String {
        switch self {
        case .invalid(let message): message
        case .sessionExpired: "Session expired."
        case .wrongCredentials: "Invalid username or password."
        case .locked(let minutes):
            "Your account is locked after too many failed sign-ins. Try again in \(minutes) minutes, or reset your password."
        case .notYourSession: "Your Session is Expired"
        case .codeExpired: "Code Expired"
        case .alreadyVerified: "User already verified"
        case .notVerified: "Your email is not verified. Please verify your email."
        case .invalidRefreshToken: "Invalid refresh token."
        case .tooMany: "Too many requests. Please try again in a minute."
        case .disabled: "Your account has been deactivated. Please contact the study team."
        }
    }
}
