import Foundation
import StudyModels

/// Why study-metadata refuses a change, said by its core without status codes. The HTTP target
/// answers every case in one place (`StudyMetadataError+API`), whichever route met it: the same
/// refusal reads the same from the draft editor, an activity's PUT and the imports.
package enum StudyMetadataError: Error, Sendable, Equatable {
    /// What the problems of an `invalid` change point into.
    package enum Subject: Sendable, Equatable {
        case studyDocument
        case activity
        case app
        case announcement
        case studyMessage
        case apiKey
        case schemaProtocol
        case assessment
        /// The draft a lifecycle action would freeze.
        case draft
        /// The draft an import made; its problems point into the study document, not the body.
        case draftMadeFrom(String)
        /// A request to move studies in (its parameters).
        case moveIn
        /// The ticks of a study's manual check-list.
        case checklist
    }

    /// The e-mail address or the password is wrong (which, is not said), or the account is disabled.
    case wrongCredentials
    /// Too many failed sign-ins; the account takes none until then.
    case locked(until: Date)
    /// The invitation's token is unknown, used or expired.
    case invitationInvalid
    /// The password breaks the policy; the message says how.
    case weakPassword(String)
    case notAnEmailAddress
    /// The app has a notification of this id already; ids are chosen so that a re-run is safe.
    case notificationExists(appId: String, notificationId: String)
    /// The admin has `APIKeyStore.maximumLive` live keys already.
    case tooManyKeys
    case noKey
    /// An admin account has this e-mail address already.
    case adminExists
    case noAdmin(String)
    case noAdminWithEmail(String)
    case noRole(adminId: String, studyId: String)
    /// Changing this study's draft needs the editor role on it.
    case editorRequired(studyId: String)
    case noStudy(String)
    case noApp(String)
    case noVersion(studyId: String, version: Int)
    /// The study is deactivated; its draft no longer changes.
    case closed(studyId: String)
    /// The content has problems (each at its JSON Pointer into `subject`); nothing was saved.
    case invalid([ValidationProblem], subject: Subject)
    /// `If-None-Match: *` found the study already there.
    case studyExists(studyId: String)
    /// `If-Match` named another revision than the draft's `current` one (0: there is no study).
    case draftChanged(studyId: String, current: Int)
    /// Another study's id differs from this one only in case; study ids are unique whatever their case.
    case studyIdTaken(studyId: String, existing: String)
    /// An import found the study other than it was when the import began (created or changed by
    /// someone else meanwhile); importing again is safe.
    case changedMeanwhile(studyId: String)
    /// The draft's activity of this identifier was not imported from an assessment, so an
    /// assessment never replaces it.
    case activityNotFromAssessment(activityId: String)
    /// The lifecycle action does not apply to a study in this status.
    case actionNotAllowed(action: LifecycleAction, current: StudyStatus)
    /// `publish-updates` with a draft equal to the newest version.
    case nothingToPublish
    /// `publish-updates` of a consent change without the team's choice on re-consent.
    case reconsentChoiceNeeded
    /// A re-consent choice where the version publishes no consent change.
    case reconsentWithoutConsentChange
    /// A message now goes only to the participants of an active study (or the testers of one in testing).
    case notActive(studyId: String, status: StudyStatus)
    case studyNotificationExists(studyId: String, notificationId: String)
    case appIdTaken(String)
    /// Org ids are unique whatever their case; another app spells this one `existing`.
    case orgSpelledOtherwise(orgId: String, existing: String)
    /// The response service could not be asked whether the study's answers can be stored; a
    /// version is never frozen unchecked.
    case storageUnchecked(String)
    /// The draft changed between the storage check and the freezing of its version.
    case changedWhileChecked(studyId: String)
    /// An upload whose content is not a PNG, JPEG, GIF or PDF.
    case notAnUploadableFile
    /// An upload over its kind's limit (`UploadedFileKind.maxBytes`).
    case fileTooLarge(kind: UploadedFileKind, bytes: Int)
    /// The study keeps `UploadedFileKind.maxPerStudy` files already.
    case tooManyFiles(studyId: String)
    /// Only a super-admin reads the whole audit log; a study admin names their study.
    case wholeAuditLogNeedsSuperAdmin
    /// Moving studies in from another deployment creates studies in an app: a super-admin's work.
    case moveInNeedsSuperAdmin
    /// The admin's role on the study named in the query is below the one the call needs.
    case roleRequired(StudyRole, studyId: String)
    /// No study by that id (where a draft is read, not written).
    case unknownStudy(String)
    /// No published study by that id (the other services ask for published studies only).
    case noPublishedStudy(String)
    case noActivityVersion(studyId: String, activityId: String, label: String)
    case notFromSchemaProtocol(studyId: String)
    case noOpenSchemaProtocol(studyId: String)
    case noAssessmentActivity(studyId: String, identifier: String)
    case noFile
    /// Internal lookups of an API key or a session by its hash.
    case noLiveKey
    case noLiveSession
    case noPushCredentials(appId: String, platform: Platform)

    /// A sentence for the person who asked; it names what to do where there is something to do.
    package var message: String {
        switch self {
        case .wrongCredentials: "e-mail or password is wrong"
        case .locked(let until): "too many failed logins; try again after \(until.formatted(.iso8601))"
        case .invitationInvalid: "the invitation is unknown, already used or expired"
        case .weakPassword(let problem): problem
        case .notAnEmailAddress: "not an e-mail address"
        case .notificationExists(let appId, let notificationId): "app \(appId) already has a notification \(notificationId)"
        case .tooManyKeys: "You have \(APIKeyStore.maximumLive) live keys; revoke one you no longer use first."
        case .noKey: "You have no API key with that id."
        case .adminExists: "an admin with this e-mail already exists"
        case .noAdmin(let adminId): "no admin \(adminId)"
        case .noAdminWithEmail(let email): "no admin account has the e-mail \(email); a super-admin invites admins"
        case .noRole(let adminId, let studyId): "admin \(adminId) has no role on \(studyId)"
        case .editorRequired(let studyId): "this needs the editor role on study \(studyId)"
        case .noStudy(let studyId): "no study \(studyId); create its draft first"
        case .noApp(let appId): "no app \(appId)"
        case .noVersion(let studyId, let version): "study \(studyId) has no version \(version)"
        case .closed(let studyId): "study \(studyId) is deactivated; its draft can no longer change"
        case .invalid(let problems, let subject):
            "the \(subject.name) has \(problems.count) problem\(problems.count == 1 ? "" : "s")"
                + (subject.pointsIntoStudyDocument ? " (located in the study document)" : "")
        case .studyExists(let studyId): "study \(studyId) exists already (If-None-Match: * creates only)"
        case .draftChanged(let studyId, 0):
            "study \(studyId) does not exist, so no revision of its draft can match If-Match"
        case .draftChanged(_, let current):
            "the draft changed since it was read (it is at revision \(current) now); read it again and redo the change"
        case .studyIdTaken(let studyId, let existing):
            "study id \(studyId) is taken: study \(existing) exists, and study ids are unique whatever their case"
        case .changedMeanwhile(let studyId): "study \(studyId) changed meanwhile; import again"
        case .activityNotFromAssessment(let activityId):
            "the study's activity \(activityId) was not imported from an assessment; import this one under another identifier, or remove that activity first"
        case .actionNotAllowed(let action, let current):
            "a study that is \(current.rawValue) cannot be given the action \(action.rawValue)"
        case .nothingToPublish: "the draft has not changed since the last published version"
        case .reconsentChoiceNeeded:
            "the consent changed: say whether participants who signed an earlier version must sign this one (reconsent=true) or not (reconsent=false)"
        case .reconsentWithoutConsentChange:
            "the consent has not changed since the last published version, so there is nothing to sign again; publish without reconsent"
        case .changedWhileChecked(let studyId):
            "study \(studyId)'s draft changed while it was being checked; nothing was published, try again"
        case .storageUnchecked(let reason):
            "whether this study's answers can be stored could not be checked now (\(reason)); nothing was published, try again in a moment"
        case .notActive(let studyId, let status):
            "study \(studyId) is \(status.rawValue): a message is sent only to the participants of an active study, or the testers of one in testing"
        case .studyNotificationExists(let studyId, let notificationId):
            "study \(studyId) already has a notification \(notificationId)"
        case .appIdTaken(let appId): "an app with id \(appId) already exists (app ids are unique whatever their case)"
        case .orgSpelledOtherwise(let orgId, let existing):
            "org id \(orgId) is spelled \(existing) by another app; org ids are unique whatever their case"
        case .notAnUploadableFile: "the file is not a PNG, JPEG or GIF image or a PDF (its content says so, whatever its name)"
        case .fileTooLarge(let kind, let bytes):
            "the file is \(bytes) bytes; \(kind == .pdf ? "a PDF" : "an image") may be at most \(kind.maxBytes / 1_048_576) MB"
        case .tooManyFiles(let studyId):
            "study \(studyId) has \(UploadedFileKind.maxPerStudy) files already, the most a study keeps; link to larger collections instead"
        case .wholeAuditLogNeedsSuperAdmin: "only super-admins read the whole audit log; name a study (studyId)"
        case .moveInNeedsSuperAdmin: "only super-admins move studies in from another deployment"
        case .roleRequired(let role, let studyId): "this needs the \(role.rawValue) role on study \(studyId)"
        case .unknownStudy(let studyId): "no study \(studyId)"
        case .noPublishedStudy(let studyId): "no published study \(studyId)"
        case .noActivityVersion(let studyId, let activityId, let label): "study \(studyId) has no activity \(activityId) at version \(label)"
        case .notFromSchemaProtocol(let studyId): "study \(studyId) was not imported from a schema protocol"
        case .noOpenSchemaProtocol(let studyId): "study \(studyId) has no schema protocol that is open for enrolment"
        case .noAssessmentActivity(let studyId, let identifier):
            "study \(studyId) has no activity \(identifier) imported from an assessment"
        case .noFile: "no such file"
        case .noLiveKey: "no live API key has that hash"
        case .noLiveSession: "no live admin session has that token"
        case .noPushCredentials(let appId, let platform): "app \(appId) has no \(platform.rawValue) push credentials"
        }
    }
}

extension StudyMetadataError.Subject {
    var name: String {
        switch self {
        case .studyDocument: "study document"
        case .activity: "activity"
        case .app: "app"
        case .announcement: "announcement"
        case .studyMessage: "message"
        case .apiKey: "API key"
        case .schemaProtocol: "protocol"
        case .assessment: "assessment"
        case .draft: "draft"
        case .draftMadeFrom(let source): "draft made from the \(source)"
        case .moveIn: "move-in request"
        case .checklist: "check-list"
        }
    }

    var pointsIntoStudyDocument: Bool {
        if case .draftMadeFrom = self { true } else { false }
    }
}
