/// Why the registration service's admin API refuses a change to a site or an app account, said
/// without status codes; `RegistrationAdminError+API` answers it (with `Invitations.Failure`) in
/// one place.
package enum RegistrationAdminError: Error, Sendable, Equatable {
    /// Another site of the study has that name (site names are compared without case).
    case siteNameTaken
    case noSite
    /// The app has no such account (or the account is another app's).
    case noAccount(appId: String)
    case accountAlreadyVerified
    /// A disabled account is sent nothing until it is enabled.
    case accountDisabled

    package var message: String {
        switch self {
        case .siteNameTaken: "the study has another site by that name"
        case .noSite: "the study has no such site"
        case .noAccount(let appId): "app \(appId) has no such account"
        case .accountAlreadyVerified: "the account has already confirmed its e-mail address"
        case .accountDisabled: "the account is disabled: enable it first"
        }
    }
}
