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
            group.get("userProfile.api", use: userProfile)
            group.post("updateUserProfile.api", use: updateUserProfile)
            group.get("studyState.api", use: studyState)
            group.post("updateStudyState.api", use: updateStudyState)
            // The original's older names for the same per-study bookmark and status (defined by
            // the apps, not called by the 2020 builds).
            group.get("userPreferences.api", use: studyState)
            group.post("updatePreferences.api", use: updateStudyState)
            group.get("activityState.api", use: activityState)
            group.post("updateActivityState.api", use: updateActivityState)
        }
    }

    @Sendable package func userProfile(_ request: Request, context: ServiceRequestContext) async throws -> UserProfileReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let profile = try await profiles.profile(userId: session.userId) else { throw RegistrationError.sessionExpired }
        return profile
    }

    /// Settings changes and the device's push token (`ProfileUpdates`).
    @Sendable package func updateUserProfile(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        try await updates.apply(.init(settings: call.object("settings"), info: call.object("info")), session: session)
        return RegistrationSuccess()
    }

    @Sendable package func studyState(_ request: Request, context: ServiceRequestContext) async throws -> StudyStateReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        return StudyStateReply(studies: try await states.studies(userId: session.userId))
    }

    @Sendable package func updateStudyState(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let items = call.array("studies") else { throw UserRegCall.invalidInput }
        try await states.update(try StudyStates.parseStudies(items), userId: session.userId)
        return RegistrationSuccess()
    }

    @Sendable package func activityState(_ request: Request, context: ServiceRequestContext) async throws -> ActivityStateReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        return ActivityStateReply(
            activities: try await states.activities(userId: session.userId, studyId: try call.required("studyId")))
    }

    /// The apps send `activity` (singular) with a top-level `studyId`; the rare bookmark call sends
    /// `activities` with the study in each item. Both are applied.
    @Sendable package func updateActivityState(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let items = call.array("activity") ?? call.array("activities") else { throw UserRegCall.invalidInput }
        try await states.update(
            try StudyStates.parseActivities(items, studyId: call.string("studyId")), userId: session.userId)
        return RegistrationSuccess()
    }
}

extension UserProfileReply: ResponseEncodable {}
extension StudyStateReply: ResponseEncodable {}
extension ActivityStateReply: ResponseEncodable {}
