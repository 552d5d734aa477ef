import Foundation
import Logging
import PostgresNIO
import StudyModels

/// Profile settings (kept as one JSON value per account) and the device a session pushes to.
package struct ProfileStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package func profile(userId: UUID) async throws -> UserProfileReply? {
        let rows = try await client.query(
            "SELECT email, first_name, last_name, settings::text FROM participants WHERE user_id = \(userId)", logger: logger)
        for try await (email, first, last, settings) in rows.decode((String, String, String, String).self) {
            let stored = (try? JSONDecoder().decode(UserProfileReply.Settings.self, from: Data(settings.utf8)))
                ?? UserProfileReply.Settings()
            return UserProfileReply(profile: .init(emailId: email, firstName: first, lastName: last), settings: stored)
        }
        return nil
    }

    package func saveSettings(_ settings: UserProfileReply.Settings, userId: UUID, on connection: PostgresConnection) async throws {
        let json = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        try await connection.query(
            "UPDATE participants SET settings = \(json)::jsonb WHERE user_id = \(userId)", logger: logger)
    }

    /// Records the push token of the session's device. A token belongs to one device, so it is
    /// taken off any other session that had it (the phone signed in again, or changed hands).
    package func setDevice(
        sessionId: UUID, token: String?, os: String?, appVersion: String?, on connection: PostgresConnection
    ) async throws {
        if let token {
            try await connection.query(
                "UPDATE participant_sessions SET device_token = NULL WHERE device_token = \(token) AND id <> \(sessionId)",
                logger: logger)
        }
        try await connection.query(
            """
            UPDATE participant_sessions SET device_token = coalesce(\(token), device_token),
                device_os = coalesce(\(os), device_os), app_version = coalesce(\(appVersion), app_version)
            WHERE id = \(sessionId)
            """, logger: logger)
    }
}
