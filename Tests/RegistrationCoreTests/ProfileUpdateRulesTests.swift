import Foundation
import InMemoryPorts
import JSONText
import RegistrationCore
import StudyModels
import Testing

/// `updateUserProfile` (`ProfileUpdates`) against in-memory profiles: settings merged member by
/// member, the device's push token kept only when it looks like one and held by one session,
/// and a refused change that leaves everything as it was.
@Suite struct ProfileUpdateRulesTests {
    static let userId = UUID()

    static func fixture() -> (InMemoryProfiles, ProfileUpdates, SessionStore.Authenticated) {
        let profiles = InMemoryProfiles([
            userId: UserProfileReply(
                profile: .init(emailId: "ana@example.org", firstName: "", lastName: ""),
                settings: .init(remoteNotifications: true, reminderLeadTime: "00:15", locale: "en"))
        ])
        let session = SessionStore.Authenticated(sessionId: UUID(), userId: userId, appId: "APP", orgId: "ORG")
        return (profiles, ProfileUpdates(transactions: profiles, profiles: profiles), session)
    }

    static func object(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONValue.parse(Array(text.utf8), budget: .peerReply) else {
            Issue.record("not an object: \(text)")
            return [:]
        }
        return object
    }

    @Test func membersSentChangeAndTheOthersKeepTheirValues() async throws {
        let (profiles, updates, session) = Self.fixture()
        try await updates.apply(
            .init(settings: try Self.object(#"{"localNotifications": "true", "reminderLeadTime": "01:30", "locale": null}"#), info: nil),
            session: session)
        let settings = try #require(profiles.state.profiles[Self.userId]?.settings)
        #expect(settings.localNotifications)
        #expect(settings.remoteNotifications, "not sent, kept")
        #expect(settings.reminderLeadTime == "01:30")
        #expect(settings.locale == "en", "null keeps the value")
        #expect(profiles.state.devices.isEmpty, "no device details, no device row")
    }

    @Test func aRefusedMemberChangesNothing() async throws {
        let (profiles, updates, session) = Self.fixture()
        let before = profiles.state.profiles
        for body in [#"{"touchId": "yes"}"#, #"{"reminderLeadTime": "90 minutes"}"#, #"{"locale": "\#(String(repeating: "x", count: 36))"}"#] {
            await #expect(throws: RegistrationError.self) {
                try await updates.apply(
                    .init(settings: try Self.object(body), info: try Self.object(#"{"os": "ios", "deviceToken": "\#(String(repeating: "ab", count: 32))"}"#)),
                    session: session)
            }
        }
        #expect(profiles.state.profiles == before)
        #expect(profiles.state.devices.isEmpty, "the device is saved with the settings or not at all")
    }

    @Test func aPushTokenIsKeptOnlyWhenItLooksLikeOneAndMovesToTheSessionThatSendsIt() async throws {
        let (profiles, updates, session) = Self.fixture()
        let apns = String(repeating: "ab", count: 32)
        // The iOS app's first call after sign-up sends its bundle id where the token goes.
        try await updates.apply(.init(settings: nil, info: try Self.object(#"{"os": "iOS", "deviceToken": "org.example.sleep", "appVersion": "1.4"}"#)), session: session)
        #expect(profiles.state.devices[session.sessionId] == .init(token: nil, os: "ios", appVersion: "1.4"))
        try await updates.apply(.init(settings: nil, info: try Self.object(#"{"os": "ios", "deviceToken": "\#(apns)"}"#)), session: session)
        #expect(profiles.state.devices[session.sessionId]?.token == apns)
        let tablet = SessionStore.Authenticated(sessionId: UUID(), userId: Self.userId, appId: "APP", orgId: "ORG")
        try await updates.apply(.init(settings: nil, info: try Self.object(#"{"os": "ios", "deviceToken": "\#(apns)"}"#)), session: tablet)
        #expect(profiles.state.devices[tablet.sessionId]?.token == apns)
        #expect(profiles.state.devices[session.sessionId]?.token == nil, "a token belongs to one device")
    }
}
