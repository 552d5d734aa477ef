import Foundation
import ServiceKit
import StudyModels

/// `updateUserProfile`: settings changes and the device's push token, saved together.
package struct ProfileUpdates: Sendable {
    /// What one call asks to change: the settings members it sends, and its device's details.
    package struct Change: Sendable {
        package var settings: JSONObject?
        package var info: JSONObject?

        package init(settings: JSONObject?, info: JSONObject?) {
            self.settings = settings
            self.info = info
        }
    }

    package let transactions: any Transactions<any ProfileWork>
    package let profiles: any ProfileLookup

    package init(transactions: any Transactions<any ProfileWork>, profiles: any ProfileLookup) {
        self.transactions = transactions
        self.profiles = profiles
    }

    /// Applies `change` to the session's participant and device in one transaction. Settings
    /// members that are absent or null keep their value; one the rules refuse changes nothing.
    package func apply(_ change: Change, session: SessionStore.Authenticated) async throws {
        guard let current = try await profiles.profile(userId: session.userId) else { throw RegistrationError.sessionExpired }
        let settings = try Self.merged(current.settings, with: change.settings ?? [:])
        let device = Self.device(change.info ?? [:])
        try await transactions.run { work in
            try await work.saveSettings(settings, userId: session.userId)
            if device.token != nil || device.os != nil || device.appVersion != nil {
                try await work.setDevice(sessionId: session.sessionId, token: device.token, os: device.os, appVersion: device.appVersion)
            }
        }
    }

    static func merged(
        _ current: UserProfileReply.Settings, with given: JSONObject
    ) throws -> UserProfileReply.Settings {
        func flag(_ key: String) throws -> Bool? {
            switch given[key] {
            case nil, .null: return nil
            case .bool(let value): return value
            case .number(let value): return value.double != 0
            case .string(let text) where ["true", "false", "1", "0"].contains(text): return text == "true" || text == "1"
            default: throw RegistrationError.invalid("Invalid input.")
            }
        }
        var settings = current
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
        return settings
    }

    /// The device's push token, platform and app version. The iOS app's first call after sign-up
    /// puts its bundle id where the token goes; only values shaped like a push token are kept.
    static func device(_ info: JSONObject) -> (token: String?, os: String?, appVersion: String?) {
        let os = info["os"]?.text.map { $0.lowercased() }.flatMap { ["ios", "android"].contains($0) ? $0 : nil }
        let token = info["deviceToken"]?.text.flatMap { DeviceToken.isPlausible($0, os: os) ? $0 : nil }
        let appVersion = info["appVersion"]?.text.map { String($0.prefix(32)) }
        return (token, os, appVersion)
    }
}

/// Push tokens as the platforms issue them: APNs 64+ hex characters, FCM a long token of URL-safe
/// characters and ':'. Anything else (a bundle id, say) is not a token.
package enum DeviceToken {
    package static func isPlausible(_ token: String, os: String?) -> Bool {
        // By scalar, ASCII only: a token goes into an APNs URL path and an FCM body.
        let scalars = token.unicodeScalars
        guard (32...4096).contains(scalars.count), scalars.allSatisfy(\.isASCII) else { return false }
        let hex = scalars.allSatisfy { $0.properties.isASCIIHexDigit }
        if os == "ios" { return hex && scalars.count >= 64 }
        return hex || (scalars.contains(":") && scalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_:".unicodeScalars.contains($0) })
    }
}
