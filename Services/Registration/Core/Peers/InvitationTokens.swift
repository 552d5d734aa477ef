import Foundation
import InternalContracts
import Logging
import ServiceKit
import StudyModels

/// Asks the response service, which checks every enrollment, for the tokens of invitations and
/// to refuse them again (signed internal calls).
package struct InvitationTokens: Sendable {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package struct Unavailable: Error {
        package init() {}
    }

    /// Each invitation's token (made, or renewed with its new expiry), or the problems the
    /// response service found (with the properties); then it kept no token.
    package func issue(_ request: InvitationTokenRequest, studyId: String, logger: Logger) async throws -> InvitationTokenReply {
        try await send(InternalCalls.invitationTokens, request, studyId: studyId, logger: logger)
    }

    package func revoke(_ invitationIds: [UUID], studyId: String, logger: Logger) async throws -> InvitationRevocationReply {
        try await send(InternalCalls.invitationRevocations, InvitationRevocation(invitationIds: invitationIds), studyId: studyId, logger: logger)
    }

    private func send<Body, Reply>(
        _ endpoint: InternalEndpoint<Body, Reply>, _ body: Body, studyId: String, logger: Logger
    ) async throws -> Reply {
        do {
            return try await client.call(endpoint, ["studyId": studyId], body: body, logger: logger).reply(from: .response)
        } catch {
            logger.warning("the response service could not answer for invitation tokens", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
    }
}
