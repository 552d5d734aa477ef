import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Profile, study state and activity state: `userProfile`, `updateUserProfile`, `studyState`,
/// `updateStudyState`, `activityState`, `updateActivityState`. Every call needs a session.
package struct StateRoutes {
    package let profiles: ProfileStore
    package let updates: ProfileUpdates
    package let states: StudyStateStore
    package let authenticator: ParticipantAuthenticator

    package init(
        profiles: ProfileStore, updates: ProfileUpdates, states: StudyStateStore, authenticator: ParticipantAuthenticator
    ) {
        self.profiles = profiles
        self.updates = updates
        self.states = states
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        for controller in UserRegPaths.controllers {
            let group = router.group(RouterPath(controller))
            let sessions = authenticator.routes(group)
            sessions.get("userProfile.api", use: userProfile)
            sessions.post("updateUserProfile.api", use: updateUserProfile)
            sessions.get("studyState.api", use: studyState)
            sessions.post("updateStudyState.api", use: updateStudyState)
            // The original's older names for the same per-study bookmark and status (defined by
            // the apps, not called by the 2020 builds).
            sessions.get("userPreferences.api", use: studyState)
            sessions.post("updatePreferences.api", use: updateStudyState)
            sessions.get("activityState.api", use: activityState)
            sessions.post("updateActivityState.api", use: updateActivityState)
        }
    }

    @Sendable package func userProfile(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> UserProfileReply {
        let session = participant.session
        guard let profile = try await profiles.profile(userId: session.userId) else { throw RegistrationError.sessionExpired }
        return profile
    }

    /// Settings changes and the device's push token (`ProfileUpdates`).
    @Sendable package func updateUserProfile(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        try await updates.apply(.init(settings: call.object("settings"), info: call.object("info")), session: session)
        return RegistrationSuccess()
    }

    @Sendable package func studyState(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> StudyStateReply {
        let session = participant.session
        return StudyStateReply(studies: try await states.studies(userId: session.userId))
    }

    @Sendable package func updateStudyState(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        guard let items = call.array("studies") else { throw UserRegCall.invalidInput }
        try await states.update(try StudyStates.parseStudies(items), userId: session.userId)
        return RegistrationSuccess()
    }

    @Sendable package func activityState(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> ActivityStateReply {
        let (call, session) = (participant.call, participant.session)
        return ActivityStateReply(
            activities: try await states.activities(userId: session.userId, studyId: try call.required("studyId")))
    }

    /// The apps send `activity` (singular) with a top-level `studyId`; the rare bookmark call sends
    /// `activities` with the study in each item. Both are applied.
    @Sendable package func updateActivityState(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        guard let items = call.array("activity") ?? call.array("activities") else { throw UserRegCall.invalidInput }
        try await states.update(
            try StudyStates.parseActivities(items, studyId: call.string("studyId")), userId: session.userId)
        return RegistrationSuccess()
    }
}

extension UserProfileReply: ResponseEncodable {}
extension StudyStateReply: ResponseEncodable {}
extension ActivityStateReply: ResponseEncodable {}
