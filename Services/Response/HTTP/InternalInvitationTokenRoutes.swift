import Foundation
import Hummingbird
import InternalContracts
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

    package init(catalog: StudyCatalog, tokens: TokenStore, properties: ParticipantPropertyStore) {
        self.catalog = catalog
        self.tokens = tokens
        self.properties = properties
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.invitationTokens, use: issue)
        group.on(InternalCalls.invitationRevocations, use: revoke)
    }

    private func study(_ call: InternalRequest<some InternalPayload>) async throws -> StudyCatalog.Study {
        try await catalog.study(of: call)
    }

    /// Every token, or the problems (answered 422, as the endpoint defines; then no token is kept).
    @Sendable package func issue(_ call: InternalRequest<InvitationTokenRequest>) async throws -> InvitationTokenReply {
        let study = try await study(call)
        let wanted = call.body
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
                return InvitationTokenReply(tokens: [], problems: problems.map { problem in
                    .init(index: problem.row > 0 ? withProperties[problem.row - 1] : -1, field: problem.field, message: problem.message)
                })
            }
        }
        return InvitationTokenReply(
            tokens: wanted.invitations.compactMap { invitation in
                issued[invitation.invitationId].map { .init(invitationId: invitation.invitationId, token: $0) }
            },
            problems: [])
    }

    @Sendable package func revoke(_ call: InternalRequest<InvitationRevocation>) async throws -> InvitationRevocationReply {
        let study = try await study(call)
        return try await tokens.revokeInvitationTokens(studyKey: study.key, call.body.invitationIds)
    }
}

extension StudyCatalog {
    /// The study an internal call's `{studyId}` names; 404 when this service does not know it.
    func study(of call: InternalRequest<some InternalPayload>) async throws -> StudyCatalog.Study {
        let studyId = try call.parameter("studyId")
        guard let study = try await study(studyId) else { throw APIError.notFound("study \(studyId) is not known here") }
        return study
    }
}
