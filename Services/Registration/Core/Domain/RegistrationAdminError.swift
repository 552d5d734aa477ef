import Foundation
import StudyModels

/// Why the registration service's admin API refuses what it is asked, said without status codes;
/// `RegistrationAdminError+API` answers it (with `Invitations.Failure`) in one place.
package enum RegistrationAdminError: Error, Sendable, Equatable {
    /// Another site of the study has that name (site names are compared without case).
    case siteNameTaken
    case noSite
    /// The app has no such account (or the account is another app's).
    case noAccount(appId: String)
    case accountAlreadyVerified
    /// A disabled account is sent nothing until it is enabled.
    case accountDisabled
    case noParticipant(studyId: String, participantId: UUID)
    case noConsent(studyId: String)
    /// The consent was recorded without a signed PDF.
    case noConsentPDF
    case noInvitation(studyId: String)
    /// Study-metadata has no published study by that id.
    case noPublishedStudy(String)
    /// Study-metadata cannot be reached to read the study's schedule.
    case scheduleUnavailable
    /// Study-metadata could not say which consent versions are in force.
    case consentVersionsUnavailable
    /// A request for consent reminders that cannot be carried out; the text says why.
    case invalidReminder(String)
    case noPushCredentials(appId: String, platform: Platform)
    /// Registration has not heard of the app (study-metadata has not sent it).
    case noApp(String)
    /// A part of a move-in export holds more accounts than one request may.
    case tooManyMovedAccounts(maximum: Int)
    /// The response service could not take the moved participants' ids; nothing more was written.
    case responseUnavailable

    package var message: String {
        switch self {
        case .siteNameTaken: "the study has another site by that name"
        case .noSite: "the study has no such site"
        case .noAccount(let appId): "app \(appId) has no such account"
        case .accountAlreadyVerified: "the account has already confirmed its e-mail address"
        case .accountDisabled: "the account is disabled: enable it first"
        case .noParticipant(let studyId, let participantId): "study \(studyId) has no participant \(participantId.uuidString.lowercased())"
        case .noConsent(let studyId): "the participant has no such consent in study \(studyId)"
        case .noConsentPDF: "this consent was recorded without a signed PDF"
        case .noInvitation(let studyId): "study \(studyId) has no such invitation"
        case .noPublishedStudy(let studyId): "study-metadata has no published study \(studyId)"
        case .scheduleUnavailable: "study-metadata cannot be reached now to read the study's schedule"
        case .invalidReminder(let reason): reason
        case .consentVersionsUnavailable:
            "study-metadata cannot be reached now to say which consent versions are in force; try again shortly"
        case .noPushCredentials(let appId, let platform): "app \(appId) has no \(platform.rawValue) push credentials"
        case .noApp(let appId): "there is no app \(appId)"
        case .tooManyMovedAccounts(let maximum): "one request moves at most \(maximum) accounts in; send the export in parts"
        case .responseUnavailable: "the response service cannot be reached now; the accounts not yet moved in were left, run the import again"
        }
    }
}
