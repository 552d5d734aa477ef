import HTTPTypes
import ResponseCore
import ServiceKitHTTP

// How the Sage doors (`SageArchiveRoutes`: the archives POST and Bridge's upload handshake) answer
// what the intake and the handshake refuse: their one mapping to statuses, in the admin API's
// JSON error format that Sage's clients read.

extension SageArchiveIntake.Failure: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .unknownParticipant:
            APIError.unauthenticated("no participant has this app token")
        case .otherStudy:
            APIError.forbidden("this app token is not a participant's of that study")
        case .withdrawn:
            APIError.forbidden("the participant has withdrawn from the study")
        case .collectionDisabled(let studyId):
            APIError.conflict("study \(studyId) is not collecting responses now")
        case .noActivity(let assessment, let studyId):
            APIError.invalid(
                "study \(studyId) has no published activity \(assessment)",
                problems: [AdminErrorBody.Problem(pointer: "/assessmentIdentifier", message: "no published activity \(assessment)")])
        case .contentMD5Mismatch:
            APIError.badRequest("the body's MD5 is not its Content-MD5: the bytes were damaged on the way", field: "Content-MD5")
        case .refused(let refusal):
            APIError.invalid(
                "the archive was refused: \(refusal.description)",
                problems: refusal.problems.map {
                    AdminErrorBody.Problem(pointer: $0.pointer, message: refusal.file.isEmpty ? $0.message : "\(refusal.file): \($0.message)")
                })
        }
    }
}

extension SageUploadHandshake.Refusal: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .invalidRequest(let pointer, let message): APIError.invalid(message, problems: [AdminErrorBody.Problem(pointer: pointer, message: message)])
        case .tooManyOpen:
            APIError.tooManyRequests(
                "\(SageUploadStore.maxOpenPerParticipant) uploads are open already; complete them or wait for them to expire")
        case .noSuchUpload: APIError.notFound("no such upload")
        case .expired: APIError(.gone, code: "expired", message: "the upload expired; request a new one")
        case .completed: APIError.conflict("the upload is completed already")
        case .badPut(let reason): APIError.badRequest(reason)
        case .bodyLongerThan(let length): APIError.badRequest("the body is longer than the \(length) bytes the upload was requested for")
        case .nothingPut: APIError.conflict("nothing was put to the upload's URL yet")
        // As a storage service answers a pre-signed URL it does not take.
        case .putURLNotValid: APIError.forbidden("this upload URL is not valid: unknown, or expired (request a new upload)")
        }
    }
}
