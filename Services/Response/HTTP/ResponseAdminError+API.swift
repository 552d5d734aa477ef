import ResponseCore
import ServiceKitHTTP

/// How the response service's admin API answers what it refuses: the one mapping of
/// `ResponseAdminError` to statuses (404, 403, 409, 422, 503), in the admin API's format.
extension ResponseAdminError: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .noStudy, .noRefusedArchive, .noArchive, .noArchiveFile, .noTokenBatch, .noTable, .noSMARTClient: .notFound(message)
        case .notAdmitted: .conflict(message)
        case .refusedAgain, .versionCannotBeProcessed, .forwardingInvalid, .propertiesInvalid, .smartClientInvalid:
            .invalid(message, problems: problems.prefix(1000).map { AdminErrorBody.Problem(pointer: $0.pointer, message: $0.message) })
        case .designUnavailable: .unavailable(message)
        }
    }
}
