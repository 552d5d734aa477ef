import Foundation
import Logging
import PostgresNIO
import ServiceKit

extension PushAudienceStore {
    /// What a reminder's pushes are of: the row whose message each push carries.
    package enum ReminderSource: Sendable {
        /// A run's reminder (`run_reminders`).
        case run(Int64)
        /// A reminder to sign a changed consent (`consent_reminders`).
        case consent(Int64)

        /// The `push_outbox` column that names it: fixed text, never from a request.
        var column: String {
            switch self {
            case .run: "reminder_id"
            case .consent: "consent_reminder_id"
            }
        }

        var id: Int64 {
            switch self {
            case .run(let id), .consent(let id): id
            }
        }
    }

    /// How many devices of `userId` take notifications now.
    static func deliverableDevices(of userId: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var devices = 0
        for try await count in try await connection.query(
            """
            SELECT count(*)::int FROM participant_sessions s JOIN participants p ON p.user_id = s.user_id
            WHERE s.user_id = \(userId) AND \(unescaped: deliverable)
            """, logger: logger
        ).decode(Int.self) { devices = count }
        return devices
    }

    /// Queues one push of `source`'s message to each device of `userId` that takes notifications,
    /// in the participant's language, and wakes the push workers; how many were queued.
    static func queueReminder(
        _ source: ReminderSource, to userId: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        var queued = 0
        for try await count in try await connection.query(
            """
            WITH queued AS (
                INSERT INTO push_outbox (\(unescaped: source.column), session_id, device_os, device_token, language)
                SELECT \(source.id), s.id, s.device_os, s.device_token, coalesce(nullif(p.settings ->> 'locale', ''), 'en')
                FROM participant_sessions s JOIN participants p ON p.user_id = s.user_id
                WHERE s.user_id = \(userId) AND \(unescaped: deliverable)
                RETURNING 1
            )
            SELECT count(*)::int FROM queued
            """, logger: logger
        ).decode(Int.self) { queued = count }
        if queued > 0 { try await ChangeListener.notify(PushWorker.channel, on: connection, logger: logger) }
        return queued
    }
}
