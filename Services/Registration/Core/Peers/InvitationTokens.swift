import Foundation
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

    package struct Unavailable: Error {}

    /// Each invitation's token (made, or renewed with its new expiry), or the problems the
    /// response service found (with the properties); then it kept no token.
    package func issue(_ request: InvitationTokenRequest, studyId: String, logger: Logger) async throws -> InvitationTokenReply {
        let reply = try await send(InternalPaths.invitationTokens(studyId: studyId), request, logger: logger)
        guard reply.status.code == 200 || reply.status.code == 422 else {
            logger.warning("the response service refused invitation tokens", metadata: ["status": "\(reply.status.code)"])
            throw Unavailable()
        }
        return try reply.decode(InvitationTokenReply.self)
    }

    package func revoke(_ invitationIds: [UUID], studyId: String, logger: Logger) async throws -> InvitationRevocationReply {
        let reply = try await send(
            InternalPaths.invitationRevocations(studyId: studyId), InvitationRevocation(invitationIds: invitationIds), logger: logger)
        guard reply.status.code == 200 else {
            logger.warning("the response service refused a revocation", metadata: ["status": "\(reply.status.code)"])
            throw Unavailable()
        }
        return try reply.decode(InvitationRevocationReply.self)
    }

    private func send(_ path: String, _ body: some Encodable, logger: Logger) async throws -> InternalClient.Reply {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        do {
            return try await client.send(.POST, to: .response, path: path, body: Array(try encoder.encode(body)), logger: logger)
        } catch {
            logger.warning("the response service is unreachable for invitation tokens", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
    }
}
