import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `/admin/v1/studies/{studyId}/invitations`: who was invited, to which site, and what became of
/// it (viewer; addresses for a study admin, audited); inviting one address or a whole CSV (all or
/// nothing), resending and revoking (study admin; audited).
package struct AdminInvitationRoutes: Sendable {
    package let invitations: Invitations
    package let audit: AuditLog

    /// The largest CSV accepted.
    package static let maxCSVBytes = 2 * 1024 * 1024

    package init(invitations: Invitations, audit: AuditLog) {
        self.invitations = invitations
        self.audit = audit
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.invitations, use: list)
        routes.on(AdminCalls.invite, use: inviteOne)
        routes.on(AdminCalls.importInvitations, use: importCSV)
        routes.on(AdminCalls.resendInvitation) { _, context, admin in
            try await change(context, admin) { id, studyId, actor in try await invitations.resend(id, studyId: studyId, actor: actor) }
        }
        routes.on(AdminCalls.revokeInvitation) { _, context, admin in
            try await change(context, admin) { id, studyId, actor in try await invitations.revoke(id, studyId: studyId, actor: actor) }
        }
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> InvitationList {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        let state = parameters["state"].map(String.init)
        if let state, !Invitation.states.contains(state) {
            throw APIError.badRequest("state must be one of \(Invitation.states.joined(separator: ", "))", field: "state")
        }
        var siteId: UUID?
        if let text = parameters["site"] {
            guard let id = UUID(uuidString: String(text)) else { throw APIError.badRequest("site must be a siteId", field: "site") }
            siteId = id
        }
        let page = try ListPage(parameters, maxLimit: AdminParticipantRoutes.maxLimit, afterName: "an invitationId")
        let identities = admin.may(.studyAdmin, on: studyId)
        var query = InvitationStore.Query(studyId: studyId, page: page, identities: identities)
        (query.state, query.siteId) = (state, siteId)
        let list = try await invitations.store.invitations(query)
        if identities, !list.invitations.isEmpty {
            try await audit.record(
                actor: admin.email, action: "invitations.identities_read", studyId: studyId,
                details: ["count": String(list.invitations.count), "search": page.search ?? "", "state": state ?? ""])
        }
        return list
    }

    @Sendable package func inviteOne(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> EditedResponse<Invitation> {
        let studyId = try context.parameters.decoded("studyId")
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let wanted = try? JSONDecoder().decode(InvitationRequest.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be {\"email\", \"siteId\", \"properties\"}")
        }
        let made = try await invitations.invite(
            [.init(line: 1, email: wanted.email, site: wanted.siteId, properties: wanted.properties ?? [:])],
            studyId: studyId, actor: admin.email)
        guard let invitation = made.first else { throw APIError.internalError() }
        return EditedResponse(status: .created, response: invitation)
    }

    /// A CSV with a header line: `email` (required), `site` (a site's name or id, optional), and
    /// any other column is a participant property of that id.
    @Sendable package func importCSV(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws
        -> EditedResponse<InvitationImport>
    {
        let studyId = try context.parameters.decoded("studyId")
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxCSVBytes)
        } catch {
            throw APIError.contentTooLarge(limit: Self.maxCSVBytes)
        }
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
            throw APIError.badRequest("the CSV must be UTF-8 text")
        }
        let wanted = try Self.wanted(fromCSV: text)
        let made = try await invitations.invite(wanted, studyId: studyId, actor: admin.email)
        return EditedResponse(status: .created, response: InvitationImport(invited: made.count, invitations: made))
    }

    /// The CSV's records as invitations; a header without `email`, a repeated column or a line
    /// with the wrong number of fields refuses the whole file, line by line.
    package static func wanted(fromCSV text: String) throws -> [Invitations.Wanted] {
        let records = CSV.records(text).filter { !($0.fields.count == 1 && $0.fields[0].trimmingCharacters(in: .whitespaces).isEmpty) }
        guard let header = records.first else { throw Invitations.Failure.refused([.init(line: 1, field: "email", message: "the CSV is empty")]) }
        let columns = header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        let lowered = columns.map { $0.lowercased() }
        guard let emailColumn = lowered.firstIndex(of: "email") else {
            throw Invitations.Failure.refused([.init(line: header.line, field: "email", message: "the header line has no email column")])
        }
        if let repeated = lowered.enumerated().first(where: { index, name in lowered.firstIndex(of: name) != index }) {
            throw Invitations.Failure.refused([.init(line: header.line, field: columns[repeated.offset], message: "column \(columns[repeated.offset]) appears twice")])
        }
        if let blank = columns.firstIndex(where: \.isEmpty) {
            throw Invitations.Failure.refused([.init(line: header.line, field: "", message: "column \(blank + 1) has no name")])
        }
        let siteColumn = lowered.firstIndex(of: "site")
        var wanted: [Invitations.Wanted] = []
        var problems: [InvitationImport.Problem] = []
        for record in records.dropFirst() {
            guard record.fields.count == columns.count else {
                problems.append(.init(
                    line: record.line, field: "", message: "\(record.fields.count) fields where the header has \(columns.count)"))
                continue
            }
            var properties: [String: String] = [:]
            for (index, value) in record.fields.enumerated() where index != emailColumn && index != siteColumn {
                properties[columns[index]] = value
            }
            wanted.append(.init(
                line: record.line, email: record.fields[emailColumn], site: siteColumn.map { record.fields[$0] },
                properties: properties))
        }
        guard problems.isEmpty else { throw Invitations.Failure.refused(problems) }
        return wanted
    }

    private func change(
        _ context: ServiceRequestContext, _ admin: AdminIdentity,
        _ action: @Sendable (UUID, String, String) async throws -> Invitation
    ) async throws -> Invitation {
        let studyId = try context.parameters.decoded("studyId")
        guard let id = UUID(uuidString: try context.parameters.decoded("invitationId")) else {
            throw RegistrationAdminError.noInvitation(studyId: studyId)
        }
        return try await action(id, studyId, admin.email)
    }
}

extension Invitation: ResponseEncodable {}
extension InvitationList: ResponseEncodable {}
extension InvitationImport: ResponseEncodable {}
