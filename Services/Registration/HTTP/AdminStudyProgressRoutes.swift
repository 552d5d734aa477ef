import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// How a study is getting on (viewer), counts only, so nothing in them identifies anyone:
/// `GET /admin/v1/studies/{studyId}/adherence`, per activity how many participants are up to
/// date, behind or not started; `GET .../enrollment-timeline`, enrollments and withdrawals per
/// day and site; `GET .../audience`, how many participants and devices a message sent now
/// reaches.
package struct AdminStudyProgressRoutes: Sendable {
    package let adherence: AdherenceStore
    package let audience: PushAudienceStore

    package init(adherence: AdherenceStore, audience: PushAudienceStore) {
        self.adherence = adherence
        self.audience = audience
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.adherence, use: show)
        routes.on(AdminCalls.enrollmentTimeline, use: timeline)
        routes.on(AdminCalls.audience, use: countAudience)
    }

    @Sendable package func countAudience(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> StudyAudience {
        let studyId = try context.parameters.decoded("studyId")
        return try await audience.audience(studyId: studyId)
    }

    @Sendable package func timeline(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> EnrollmentTimeline {
        let studyId = try context.parameters.decoded("studyId")
        return try await adherence.enrollmentTimeline(studyId: studyId)
    }

    @Sendable package func show(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ActivityAdherence {
        let studyId = try context.parameters.decoded("studyId")
        return try await adherence.adherence(studyId: studyId)
    }
}

extension ActivityAdherence: ResponseEncodable {}
extension EnrollmentTimeline: ResponseEncodable {}
extension StudyAudience: ResponseEncodable {}
