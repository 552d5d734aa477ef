import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import Logging
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participants[/{participantId}]`: who joined a study, with
/// their state, consent history and activity states, for the study's admins; and the signed
/// consent PDFs. The caller signs in at study-metadata; each request asks it who the token
/// belongs to (`RemoteAdminAuthenticator`). E-mail addresses and consent PDFs are shown only to a
/// study admin or a super-admin, and each time they are, the audit log says who read them.
package struct AdminParticipantRoutes: Sendable {
    package let directory: ParticipantDirectory
    package let consents: ConsentStore
    /// Study-metadata, asked which consent versions a signature satisfies.
    package let studies: any StudySchedules
    package let audit: AuditLog

    /// The most rows of a page.
    package static let maxLimit = 500

    package init(directory: ParticipantDirectory, consents: ConsentStore, studies: any StudySchedules, audit: AuditLog) {
        self.directory = directory
        self.consents = consents
        self.studies = studies
        self.audit = audit
    }

    /// The consent versions in force in the study (nil: any signature, or nothing published).
    func consentVersionsInForce(_ studyId: String, logger: Logger) async throws -> [String]? {
        try await standing(of: studyId, logger: logger)?.consentVersionsInForce
    }

    /// The published study's standing (nil: nothing published); refused when study-metadata
    /// cannot say, as no one's consent can be judged without it.
    func standing(of studyId: String, logger: Logger) async throws -> StudyStanding? {
        do { return try await studies.standing(of: studyId, logger: logger) } catch is StudyDirectory.Unavailable {
            throw RegistrationAdminError.consentVersionsUnavailable
        }
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.participants, use: list)
        routes.on(AdminCalls.participant, use: show)
        routes.on(AdminCalls.consentPDF, use: consentPDF)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> ParticipantList {
        let studyId = try context.parameters.decoded("studyId")
        var query = try Self.query(request.uri.queryParameters, studyId: studyId, identities: admin.may(.studyAdmin, on: studyId))
        query.consentVersionsInForce = try await consentVersionsInForce(studyId, logger: context.logger)
        return try await page(query, admin: admin)
    }

    /// A checked page of the list (`query`, with the consent versions in force), the addresses in
    /// it audited as read when `admin` may see them.
    func page(_ query: ParticipantDirectory.Query, admin: AdminIdentity) async throws -> ParticipantList {
        let studyId = query.studyId
        let list = try await directory.participants(query)
        if query.identities, !list.participants.isEmpty {
            try await audit.record(
                actor: admin.email, action: "participants.identities_read", studyId: studyId,
                details: ["count": String(list.participants.count), "search": query.page.search ?? "", "status": query.status ?? ""])
        }
        return list
    }

    @Sendable package func show(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantDetail {
        try await detail(of: try Self.participantId(context), in: try context.parameters.decoded("studyId"), admin: admin, logger: context.logger)
    }

    /// Participant `participantId` of `studyId` as `admin` may see them: their address, and
    /// the audit event saying it was read, only for a study admin.
    func detail(of participantId: UUID, in studyId: String, admin: AdminIdentity, logger: Logger) async throws -> ParticipantDetail {
        let identities = admin.may(.studyAdmin, on: studyId)
        guard
            let detail = try await directory.participant(
                studyId: studyId, participantId: participantId, identities: identities, mayReadConsentPDFs: identities,
                consentVersionsInForce: try await consentVersionsInForce(studyId, logger: logger))
        else { throw RegistrationAdminError.noParticipant(studyId: studyId, participantId: participantId) }
        if identities {
            try await audit.record(
                actor: admin.email, action: "participants.identities_read", studyId: studyId,
                details: ["count": "1", "participantId": participantId.uuidString.lowercased()])
        }
        return detail
    }

    /// The signed PDF as the participant's app uploaded it, checked against the SHA-256 recorded
    /// then. Study admins only: the document carries the participant's name and signature.
    @Sendable package func consentPDF(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let participantId = try Self.participantId(context)
        guard let consentId = Int64(try context.parameters.decoded("consentId")), consentId > 0 else {
            throw APIError.badRequest("consentId must be a consent's id, as the participant's page lists it", field: "consentId")
        }
        guard let (userId, _, _) = try await directory.account(studyId: studyId, participantId: participantId),
            let record = try await consents.record(consentId: consentId, userId: userId, studyId: studyId)
        else { throw RegistrationAdminError.noConsent(studyId: studyId) }
        guard let pdf = try await consents.pdf(of: record) else {
            throw RegistrationAdminError.noConsentPDF
        }
        try await audit.record(
            actor: admin.email, action: "participants.consent_pdf_read", studyId: studyId,
            details: [
                "participantId": participantId.uuidString.lowercased(), "consentId": String(consentId),
                "version": record.version,
            ])
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/pdf",
                .contentDisposition: "attachment; filename=\"consent-\(consentId).pdf\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: pdf)))
    }

    static func participantId(_ context: ServiceRequestContext) throws -> UUID {
        guard let id = UUID(uuidString: try context.parameters.decoded("participantId")) else {
            throw APIError.notFound("participant ids are UUIDs, as the participants list gives them")
        }
        return id
    }

    /// The page asked for, each parameter checked: a wrong one is refused (400) by name.
    static func query(_ parameters: Parameters, studyId: String, identities: Bool) throws -> ParticipantDirectory.Query {
        let status = parameters["status"].map(String.init)
        if let status, !ParticipantList.statuses.contains(status) {
            throw APIError.badRequest("status must be one of \(ParticipantList.statuses.joined(separator: ", "))", field: "status")
        }
        var siteId: UUID?
        if let text = parameters["site"] {
            guard let id = UUID(uuidString: String(text)) else { throw APIError.badRequest("site must be a siteId", field: "site") }
            siteId = id
        }
        let hash = try parameters["appTokenSHA256"].map(ParticipantQuery.appTokenSHA256)
        let page = try ListPage(parameters, maxLimit: maxLimit, afterName: "a participantId")
        var sort = ParticipantList.Sort.participantId
        if let text = parameters["sort"] {
            guard let value = ParticipantList.Sort(rawValue: String(text)) else {
                throw APIError.badRequest(
                    "sort must be one of \(ParticipantList.Sort.allCases.map(\.rawValue).joined(separator: ", "))", field: "sort")
            }
            sort = value
        }
        var descending = false
        if let text = parameters["order"] {
            guard text == "asc" || text == "desc" else { throw APIError.badRequest("order must be asc or desc", field: "order") }
            descending = text == "desc"
        }
        var owing = false
        if let text = parameters["consent"] {
            guard text == "owed" else { throw APIError.badRequest("consent must be owed (those who owe a signature)", field: "consent") }
            owing = true
        }
        var query = ParticipantDirectory.Query(studyId: studyId, page: page, identities: identities)
        query.owingConsent = owing
        (query.status, query.siteId, query.appTokenSHA256) = (status, siteId, hash)
        query.sort = sort
        query.descending = descending
        return query
    }
}

extension ParticipantList: ResponseEncodable {}
extension ParticipantDetail: ResponseEncodable {}
