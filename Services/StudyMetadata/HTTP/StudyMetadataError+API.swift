import ServiceKitHTTP
import StudyMetadataCore

/// How the admin API answers each `StudyMetadataError`: 422 with every problem at its JSON
/// Pointer for content, 412 for a draft that is not the one the save expected, 409 for a state
/// that refuses the change, 404 and 403 as usual.
extension StudyMetadataError: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .wrongCredentials: .unauthenticated(message)
        case .locked: APIError(.forbidden, code: "locked", message: message)
        case .invitationInvalid: APIError(.gone, code: "invitation_invalid", message: message)
        case .weakPassword: .badRequest(message, field: "password")
        case .notAnEmailAddress: .badRequest(message, field: "email")
        case .noAdmin, .noAdminWithEmail, .noRole, .noKey: .notFound(message)
        case .adminExists, .notificationExists, .studyNotificationExists, .tooManyKeys: .conflict(message)
        case .editorRequired, .wholeAuditLogNeedsSuperAdmin, .moveInNeedsSuperAdmin, .roleRequired: .forbidden(message)
        case .unknownStudy, .noPublishedStudy, .noActivityVersion, .notFromSchemaProtocol, .noOpenSchemaProtocol, .noAssessmentActivity,
            .noFile, .noLiveKey, .noLiveSession, .noPushCredentials:
            .notFound(message)
        case .noStudy, .noApp, .noVersion: .notFound(message)
        case .invalid(let problems, _): .invalid(message, problems: problems)
        case .reconsentChoiceNeeded, .reconsentWithoutConsentChange: .badRequest(message, field: "reconsent")
        case .notAnUploadableFile: APIError(.unsupportedMediaType, code: "unsupported_media_type", message: message)
        case .fileTooLarge: APIError(.contentTooLarge, code: "too_large", message: message)
        case .tooManyFiles: .conflict(message)
        case .studyExists: APIError(.preconditionFailed, code: "study_exists", message: message)
        case .draftChanged: APIError(.preconditionFailed, code: "draft_changed", message: message)
        case .storageUnchecked: APIError(.serviceUnavailable, code: "unavailable", message: message)
        case .closed, .studyIdTaken, .changedMeanwhile, .changedWhileChecked, .activityNotFromAssessment, .actionNotAllowed, .nothingToPublish,
            .appIdTaken, .orgSpelledOtherwise, .notActive:
            .conflict(message)
        }
    }
}
