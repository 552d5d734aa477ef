import Foundation
import InternalContracts
import Logging
import ServiceKit
import StudyModels

/// Tells the response service of participants moved in from a MyStudies deployment, so their
/// apps' participant ids are taken with their next responses, and of their invitations, so the
/// tokens in the e-mails still work (signed internal calls).
package protocol MovedParticipantRegistry: Sendable {
    func register(_ participants: MovedParticipants, studyId: String, logger: Logger) async throws -> MovedParticipantsReply
    func register(_ invitations: MovedInvitationTokens, studyId: String, logger: Logger) async throws -> MovedParticipantsReply
}

package struct ResponseParticipantRegistry: MovedParticipantRegistry {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package func register(_ participants: MovedParticipants, studyId: String, logger: Logger) async throws -> MovedParticipantsReply {
        try await client.call(InternalCalls.movedParticipants, ["studyId": studyId], body: participants, logger: logger).reply(from: .response)
    }

    package func register(_ invitations: MovedInvitationTokens, studyId: String, logger: Logger) async throws -> MovedParticipantsReply {
        try await client.call(InternalCalls.movedInvitationTokens, ["studyId": studyId], body: invitations, logger: logger)
            .reply(from: .response)
    }
}
