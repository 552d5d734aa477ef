import Foundation
import PostgresNIO
import Hummingbird
import ServiceKit
import StudyModels

/// Profile, study state and activity state: `userProfile`, `updateUserProfile`, `studyState`,
/// `updateStudyState`, `activityState`, `updateActivityState`. Every call needs a session.
struct StateRoutes {
    let client: PostgresClient
    let profiles: ProfileStore
    let states: StudyStateStore
    let authenticator: ParticipantAuthenticator

    func add(to router: Router<ServiceRequestContext>) {
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

    @Sendable func userProfile(_ request: Request, context: ServiceRequestContext) async throws -> UserProfileReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let profile = try await profiles.profile(userId: session.userId) else { throw RegistrationError.sessionExpired }
        return profile
    }

    /// Settings changes and the device's push token. The iOS app's first call after sign-up puts
    /// its bundle id where the token goes; only values shaped like a push token are kept.
    @Sendable func updateUserProfile(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let current = try await profiles.profile(userId: session.userId) else { throw RegistrationError.sessionExpired }
        var settings = current.settings
        if let given = call.object("settings") {
            func flag(_ key: String) throws -> Bool? {
                switch given[key] {
                case nil, .null: return nil
                case .bool(let value): return value
                case .number(let value): return value != 0
                case .string(let text) where ["true", "false", "1", "0"].contains(text): return text == "true" || text == "1"
                default: throw RegistrationError.invalid("Invalid input.")
                }
            }
            settings.remoteNotifications = try flag("remoteNotifications") ?? settings.remoteNotifications
            settings.localNotifications = try flag("localNotifications") ?? settings.localNotifications
            settings.touchId = try flag("touchId") ?? settings.touchId
            settings.passcode = try flag("passcode") ?? settings.passcode
            if let lead = given["reminderLeadTime"]?.text {
                guard lead.range(of: #"^\d{1,2}:\d{2}$"#, options: .regularExpression) != nil else {
                    throw RegistrationError.invalid("reminderLeadTime must be HH:mm.")
                }
                settings.reminderLeadTime = lead
            }
            if let locale = given["locale"]?.text {
                guard locale.count <= 35 else { throw RegistrationError.invalid("Invalid input.") }
                settings.locale = locale
            }
        }
        let info = call.object("info") ?? [:]
        let os = info["os"]?.text.map { $0.lowercased() }.flatMap { ["ios", "android"].contains($0) ? $0 : nil }
        let token = info["deviceToken"]?.text.flatMap { DeviceToken.isPlausible($0, os: os) ? $0 : nil }
        let appVersion = info["appVersion"]?.text.map { String($0.prefix(32)) }
        try await client.withTransaction(logger: context.logger) { connection in
            try await profiles.saveSettings(settings, userId: session.userId, on: connection)
            if token != nil || os != nil || appVersion != nil {
                try await profiles.setDevice(
                    sessionId: session.sessionId, token: token, os: os, appVersion: appVersion, on: connection)
            }
        }
        return RegistrationSuccess()
    }

    @Sendable func studyState(_ request: Request, context: ServiceRequestContext) async throws -> StudyStateReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        return StudyStateReply(studies: try await states.studies(userId: session.userId))
    }

    @Sendable func updateStudyState(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let items = call.array("studies") else { throw UserRegCall.invalidInput }
        try await states.update(try StudyStates.parseStudies(items), userId: session.userId)
        return RegistrationSuccess()
    }

    @Sendable func activityState(_ request: Request, context: ServiceRequestContext) async throws -> ActivityStateReply {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        return ActivityStateReply(
            activities: try await states.activities(userId: session.userId, studyId: try call.required("studyId")))
    }

    /// The apps send `activity` (singular) with a top-level `studyId`; the rare bookmark call sends
    /// `activities` with the study in each item. Both are applied.
    @Sendable func updateActivityState(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        let session = try await authenticator.authenticate(call)
        guard let items = call.array("activity") ?? call.array("activities") else { throw UserRegCall.invalidInput }
        try await states.update(
            try StudyStates.parseActivities(items, studyId: call.string("studyId")), userId: session.userId)
        return RegistrationSuccess()
    }
}

/// Push tokens as the platforms issue them: APNs 64+ hex characters, FCM a long token of URL-safe
/// characters and ':'. Anything else (a bundle id, say) is not a token.
enum DeviceToken {
    static func isPlausible(_ token: String, os: String?) -> Bool {
        guard (32...4096).contains(token.count) else { return false }
        let hex = token.allSatisfy(\.isHexDigit)
        if os == "ios" { return hex && token.count >= 64 }
        return hex || (token.contains(":") && token.allSatisfy { $0.isLetter || $0.isNumber || "-_:".contains($0) })
    }
}

extension UserProfileReply: ResponseEncodable {}
extension StudyStateReply: ResponseEncodable {}
extension ActivityStateReply: ResponseEncodable {}
