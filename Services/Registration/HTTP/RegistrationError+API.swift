import RegistrationCore
import ServiceKitHTTP

/// How the registration API answers each `RegistrationError`, in the `StatusMessage` format the
/// apps read: 401 only for an unknown or expired session or wrong credentials (the apps then
/// refresh or ask again), 403 for what refreshing cannot fix.
extension RegistrationError: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .invalid:
            APIError(.badRequest, code: "invalid_request", message: message, statusMessageCode: .invalidInput)
        case .sessionExpired, .wrongCredentials:
            APIError(.unauthorized, code: "unauthenticated", message: message, statusMessageCode: .invalidAuthorization)
        case .locked:
            APIError(.unauthorized, code: "locked", message: message, statusMessageCode: .invalidAuthorization)
        case .disabled:
            APIError(.unauthorized, code: "disabled", message: message, statusMessageCode: .invalidAuthorization)
        case .notYourSession, .invalidRefreshToken:
            APIError(.forbidden, code: "forbidden", message: message, statusMessageCode: .noData)
        case .codeExpired:
            APIError(.forbidden, code: "expired", message: message, statusMessageCode: .noData)
        case .alreadyVerified:
            APIError(.forbidden, code: "conflict", message: message, statusMessageCode: .noData)
        case .notVerified:
            APIError(.forbidden, code: "not_verified", message: message, statusMessageCode: .noData)
        case .tooMany:
            APIError(
                .tooManyRequests, code: "rate_limited", message: message, statusMessageCode: .invalidInput,
                headers: [.retryAfter: "60"])
        }
    }
}
