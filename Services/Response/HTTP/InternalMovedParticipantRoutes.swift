import Foundation
import Hummingbird
import InternalContracts
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/studies/{studyId}/moved-participants` and `.../moved-invitation-tokens`:
/// participants registration moved in from a MyStudies deployment, by the hashes of the
/// participant ids their apps hold, and their invitations with the tokens their e-mails hold
/// (signed; only the registration service may call them).
package struct InternalMovedParticipantRoutes {
    package let catalog: StudyCatalog
    package let participants: EnrollmentStore
    package let tokens: TokenStore

    package init(catalog: StudyCatalog, participants: EnrollmentStore, tokens: TokenStore) {
        self.catalog = catalog
        self.participants = participants
        self.tokens = tokens
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.movedParticipants, use: moveIn)
        group.on(InternalCalls.movedInvitationTokens, use: moveInInvitations)
    }

    private func study(_ call: InternalRequest<some InternalPayload>) async throws -> StudyCatalog.Study {
        try await catalog.study(of: call)
    }

    @Sendable package func moveIn(_ call: InternalRequest<MovedParticipants>) async throws -> MovedParticipantsReply {
        try await participants.moveIn(study: try await study(call), call.body)
    }

    @Sendable package func moveInInvitations(_ call: InternalRequest<MovedInvitationTokens>) async throws -> MovedParticipantsReply {
        try await tokens.moveInInvitationTokens(studyKey: try await study(call).key, call.body)
    }
}
