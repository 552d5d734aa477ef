import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Leaving: `withdraw` (one study, DELETE), `deactivate` (the account, DELETE, as the apps do it)
/// and `deleteAccount` (GET, defined by the apps but unused).
package struct LeavingRoutes {
    package let states: StudyStateStore
    package let authenticator: ParticipantAuthenticator

    package init(states: StudyStateStore, authenticator: ParticipantAuthenticator) {
        self.states = states
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        for controller in UserRegPaths.controllers {
            let group = router.group(RouterPath(controller))
            let sessions = authenticator.routes(group)
            sessions.delete("withdraw.api", use: withdraw)
            UserRegPaths.refuseOtherMethods(of: "withdraw.api", allowing: .delete, in: group)
            sessions.delete("deactivate.api", use: deactivate)
            UserRegPaths.refuseOtherMethods(of: "deactivate.api", allowing: .delete, in: group)
            sessions.get("deleteAccount.api", use: deleteAccount)
        }
    }

    @Sendable package func withdraw(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        let studyId = try call.required("studyId")
        try await states.withdraw(userId: session.userId, studyId: studyId, deleteData: call.bool("deleteData") ?? false)
        return RegistrationSuccess()
    }

    @Sendable package func deactivate(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        let studies = (call.array("deleteData") ?? []).compactMap(\.text)
        try await states.deleteAccount(userId: session.userId, withdrawing: studies, action: "deactivated")
        return RegistrationSuccess()
    }

    @Sendable package func deleteAccount(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let session = participant.session
        try await states.deleteAccount(userId: session.userId, withdrawing: [], action: "deleted")
        return RegistrationSuccess()
    }
}
