import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `updateEligibilityConsentStatus` (store a consent and its signed PDF) and `consentPDF`.
package struct ConsentRoutes {
    package let consents: ConsentStore
    package let studies: StudyDirectory
    package let authenticator: ParticipantAuthenticator
    /// Largest signed PDF accepted, in bytes (after base64 decoding).
    package let maxPDFBytes: Int

    package init(
        consents: ConsentStore, studies: StudyDirectory, authenticator: ParticipantAuthenticator, maxPDFBytes: Int
    ) {
        self.consents = consents
        self.studies = studies
        self.authenticator = authenticator
        self.maxPDFBytes = maxPDFBytes
    }

    package func add(to router: Router<ServiceRequestContext>) {
        for controller in UserRegPaths.controllers {
            let group = router.group(RouterPath(controller))
            let sessions = authenticator.routes(group)
            sessions.post("updateEligibilityConsentStatus.api", use: update)
            sessions.get("consentPDF.api", use: pdf)
        }
    }

    @Sendable package func update(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        let studyId = try call.required("studyId")
        guard let consent = call.object("consent") else { throw UserRegCall.invalidInput }
        guard let version = consent["version"]?.text, !version.isEmpty, version.count <= 20 else {
            throw RegistrationError.invalid("Consent version is required")
        }
        let status = consent["status"]?.text ?? "completed"
        guard ["pending", "completed"].contains(status) else { throw RegistrationError.invalid("Invalid consent status.") }
        var pdf: Data?
        if let encoded = consent["pdf"]?.text, !encoded.isEmpty {
            // Checked before decoding, so an oversized upload costs no memory beyond the body limit.
            guard encoded.count <= (maxPDFBytes / 3 + 1) * 4 + 1024 else {
                throw RegistrationError.invalid("The consent PDF is too large.")
            }
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                throw RegistrationError.invalid("The consent PDF is not base64.")
            }
            guard data.count <= maxPDFBytes else { throw RegistrationError.invalid("The consent PDF is too large.") }
            guard data.starts(with: Array("%PDF-".utf8)) else { throw RegistrationError.invalid("The consent document is not a PDF.") }
            pdf = data
        }
        // `sharing` is "true", "false", "NA", or "" on re-consent.
        let sharing = call.string("sharing").map { String($0.prefix(16)) } ?? ""
        // Only a study of the participant's own app that is published and not closed: any other
        // id would let an account fill the disk with documents nobody asked for.
        guard Identifiers.isValid(studyId) else { throw RegistrationError.invalid("This study is not available.") }
        let standing: StudyStanding?
        do { standing = try await studies.standing(of: studyId, logger: context.logger) } catch is StudyDirectory.Unavailable {
            throw APIError(
                .serviceUnavailable, code: "unavailable", message: "The study cannot be checked now; please try again.",
                statusMessageCode: .invalidInput)
        }
        guard let standing, standing.appId == session.appId, standing.status != .deactivated, standing.status != .preLaunch else {
            throw RegistrationError.invalid("This study is not available.")
        }
        try await consents.record(
            userId: session.userId, appId: session.appId, studyId: studyId, version: version, status: status,
            eligibility: call.bool("eligibility"), sharing: sharing, pdf: pdf)
        return RegistrationSuccess()
    }

    /// The requested consent version, or the newest when `consentVersion` is empty (as the apps send it).
    @Sendable package func pdf(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> ConsentPDFReply {
        let (call, session) = (participant.call, participant.session)
        let studyId = try call.required("studyId")
        guard let record = try await consents.latest(userId: session.userId, studyId: studyId, version: call.string("consentVersion")),
            let data = try await consents.pdf(of: record)
        else {
            throw APIError(.notFound, code: "not_found", message: "No consent document found.", statusMessageCode: .noData)
        }
        return ConsentPDFReply(
            consent: .init(version: record.version, content: data.base64EncodedString()), sharing: record.sharing)
    }
}

extension ConsentPDFReply: ResponseEncodable {}
