import Foundation
import Hummingbird
import InternalContracts
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/studies/{studyId}/moved-participants`: participants registration moved in
/// from a MyStudies deployment, by the hashes of the participant ids their apps hold (signed; only
/// the registration service may call it).
package struct InternalMovedParticipantRoutes {
    package let catalog: StudyCatalog
    package let participants: EnrollmentStore

    package init(catalog: StudyCatalog, participants: EnrollmentStore) {
        self.catalog = catalog
        self.participants = participants
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.movedParticipants, use: moveIn)
    }

    @Sendable package func moveIn(_ call: InternalRequest<MovedParticipants>) async throws -> MovedParticipantsReply {
        let studyId = try call.parameter("studyId")
        guard let study = try await catalog.study(studyId) else { throw APIError.notFound("study \(studyId) is not known here") }
        return try await participants.moveIn(study: study, call.body)
    }
}
