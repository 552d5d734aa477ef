import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/invitations/enrolled`: the response service's outbox reports that an
/// invitation's token was spent (signed; only the response service may call it). Repeated
/// deliveries change nothing more.
package struct InternalInvitationRoutes {
    package struct Received: ResponseEncodable {
        package var recorded: Bool
    }

    package let invitations: Invitations

    package init(invitations: Invitations) {
        self.invitations = invitations
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/invitations/enrolled", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Received {
        try context.requireCaller(.response, "reports spent invitation tokens")
        let buffer = try await request.body.collect(upTo: 16 * 1024)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let enrollment = try? decoder.decode(InvitationEnrollment.self, from: Data(buffer: buffer)),
            enrollment.participantTokenHash.count == 64, enrollment.participantTokenHash.allSatisfy(\.isHexDigit)
        else {
            throw APIError.badRequest("the body is not an invitation enrollment")
        }
        return Received(recorded: try await invitations.recordEnrollment(enrollment))
    }
}
