import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/invitations/enrolled`: the response service's outbox reports that an
/// invitation's token was spent (signed; only the response service may call it). Repeated
/// deliveries change nothing more.
package struct InternalInvitationRoutes {
    package let invitations: Invitations

    package init(invitations: Invitations) {
        self.invitations = invitations
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.invitationEnrollments, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<InvitationEnrollment>) async throws -> EnrollmentRecorded {
        EnrollmentRecorded(recorded: try await invitations.recordEnrollment(call.body))
    }
}
