import RegistrationCore
import ServiceKitHTTP
import StudyModels

/// How the registration admin API answers what its core refuses: sites and app accounts
/// (`RegistrationAdminError`) and invitations (`Invitations.Failure`). The app's own API answers
/// `RegistrationError` in `RegistrationError+API`.
extension RegistrationAdminError: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .noSite, .noAccount, .noParticipant, .noConsent, .noConsentPDF, .noInvitation, .noPublishedStudy, .noPushCredentials, .noApp:
            .notFound(message)
        case .siteNameTaken, .accountAlreadyVerified, .accountDisabled: .conflict(message)
        case .scheduleUnavailable, .responseUnavailable, .consentVersionsUnavailable: .unavailable(message)
        case .tooManyMovedAccounts, .invalidReminder: .badRequest(message)
        }
    }
}

extension Invitations.Failure: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .refused(let problems):
            let describe = { (problem: InvitationImport.Problem) in
                problem.line > 0 ? "line \(problem.line): \(problem.message)" : problem.message
            }
            return APIError.invalid(
                problems.count == 1 ? describe(problems[0]) : "\(problems.count) lines cannot be used; nobody was invited",
                problems: problems.prefix(1000).map {
                    AdminErrorBody.Problem(pointer: "/lines/\($0.line)/\($0.field)", message: describe($0))
                })
        case .unknownStudy: return .notFound("study-metadata has no published study by that id")
        case .unavailable: return .unavailable("study-metadata or the response service cannot be reached now; nothing was changed")
        case .notFound: return .notFound("the study has no such invitation")
        case .notOpen(let state): return .conflict("the invitation is \(state): only an open one can be resent or revoked")
        case .mailLimit(let why): return .tooManyRequests("\(why); nothing was sent")
        }
    }
}
