import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/studies/{studyId}/invitation-tokens[/revoke]`: registration's invitations
/// get their tokens here, with their participant properties, and have them revoked (signed; only
/// the registration service may call them).
package struct InternalInvitationTokenRoutes {
    package let catalog: StudyCatalog
    package let tokens: TokenStore
    package let properties: ParticipantPropertyStore

    /// The most invitations one call may carry (registration's CSV limit).
    package static let maxInvitations = 10_000

    package init(catalog: StudyCatalog, tokens: TokenStore, properties: ParticipantPropertyStore) {
        self.catalog = catalog
        self.tokens = tokens
        self.properties = properties
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/studies/:studyId/invitation-tokens", use: issue)
        group.post("/v1/studies/:studyId/invitation-tokens/revoke", use: revoke)
    }

    private func study(_ context: ServiceRequestContext) async throws -> StudyCatalog.Study {
        try context.requireCaller(.registration, "asks for invitation tokens")
        let studyId = try context.parameters.decoded("studyId")
        guard let study = try await catalog.study(studyId) else { throw APIError.notFound("study \(studyId) is not known here") }
        return study
    }

    /// 200 with every token, or 422 with the problems (then no token is kept).
    @Sendable package func issue(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<InvitationTokenReply> {
        let study = try await study(context)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        guard let wanted = try? decoder.decode(InvitationTokenRequest.self, from: Data(buffer: body)),
            (1...Self.maxInvitations).contains(wanted.invitations.count),
            Set(wanted.invitations.map(\.invitationId)).count == wanted.invitations.count
        else {
            throw APIError.badRequest("the body must be 1 to \(Self.maxInvitations) invitations with distinct ids")
        }
        let issued = try await tokens.issueInvitationTokens(studyKey: study.key, wanted.invitations, createdBy: wanted.createdBy)
        // Properties are stored by token, checked against the study's published ones, all or none.
        let withProperties = wanted.invitations.indices.filter { !wanted.invitations[$0].properties.isEmpty }
        if !withProperties.isEmpty {
            let rows = withProperties.map { index in
                ParticipantProperties.Row(
                    token: issued[wanted.invitations[index].invitationId] ?? "",
                    values: wanted.invitations[index].properties.mapValues { Optional($0) })
            }
            let problems = try await properties.upload(rows, studyKey: study.key, actor: wanted.createdBy)
            if !problems.isEmpty {
                // Properties come only with new invitations (a resend sends none), so every token
                // of this call is one it made.
                let fresh = wanted.invitations.map(\.invitationId)
                try await tokens.discardInvitationTokens(studyKey: study.key, fresh)
                return EditedResponse(
                    status: .unprocessableContent,
                    response: InvitationTokenReply(tokens: [], problems: problems.map { problem in
                        .init(index: problem.row > 0 ? withProperties[problem.row - 1] : -1, field: problem.field, message: problem.message)
                    }))
            }
        }
        return EditedResponse(
            status: .ok,
            response: InvitationTokenReply(
                tokens: wanted.invitations.compactMap { invitation in
                    issued[invitation.invitationId].map { .init(invitationId: invitation.invitationId, token: $0) }
                },
                problems: []))
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext) async throws -> InvitationRevocationReply {
        let study = try await study(context)
        let body = try await request.body.collect(upTo: 1024 * 1024)
        guard let wanted = try? JSONDecoder().decode(InvitationRevocation.self, from: Data(buffer: body)),
            (1...Self.maxInvitations).contains(wanted.invitationIds.count)
        else {
            throw APIError.badRequest("the body must be {\"invitationIds\": [...]} with 1 to \(Self.maxInvitations) ids")
        }
        return try await tokens.revokeInvitationTokens(studyKey: study.key, wanted.invitationIds)
    }
}

extension InvitationTokenReply: ResponseEncodable {}
extension InvitationRevocationReply: ResponseEncodable {}
