import Foundation
import Logging
import PostgresNIO

/// Records who did what, when, to which study and version. Every state change that matters
/// writes one event; super-admins can list them.
public struct AuditLog: Sendable {
    public struct Event: Codable, Sendable, Equatable {
        public var id: Int64
        public var at: Date
        /// Who acted: an admin's e-mail, a participant id, a service name, or `system`.
        public var actor: String
        /// What happened, as a dotted verb (`admin.login`, `study.launch`).
        public var action: String
        public var studyId: String?
        public var studyVersion: Int?
        /// Facts about the event (never secrets).
        public var details: [String: String]
    }

    /// `GET /admin/v1/audit`'s reply.
    public struct EventList: Codable, Sendable {
        public var events: [Event]

        public init(events: [Event]) {
            self.events = events
        }
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Writes an event, in `connection`'s transaction when given so it commits with the change.
    public func record(
        actor: String, action: String, studyId: String? = nil, studyVersion: Int? = nil,
        details: [String: String] = [:], on connection: PostgresConnection? = nil
    ) async throws {
        let detailsJSON = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        let query: PostgresQuery = """
            INSERT INTO audit_events (actor, action, study_id, study_version, details)
            VALUES (\(actor), \(action), \(studyId), \(studyVersion), \(detailsJSON)::jsonb)
            """
        if let connection {
            try await connection.query(query, logger: logger)
        } else {
            try await client.query(query, logger: logger)
        }
    }

    /// The newest events first, optionally for one study.
    public func list(studyId: String? = nil, limit: Int = 100) async throws -> [Event] {
        let rows = try await client.query(
            """
            SELECT id, at, actor, action, study_id, study_version, details::text FROM audit_events
            WHERE \(studyId)::text IS NULL OR study_id = \(studyId)::text
            ORDER BY id DESC LIMIT \(min(max(limit, 1), 1000))
            """, logger: logger)
        var events: [Event] = []
        for try await (id, at, actor, action, studyId, version, details) in rows.decode(
            (Int64, Date, String, String, String?, Int?, String).self)
        {
            let decoded = (try? JSONDecoder().decode([String: String].self, from: Data(details.utf8))) ?? [:]
            events.append(
                Event(id: id, at: at, actor: actor, action: action, studyId: studyId, studyVersion: version, details: decoded))
        }
        return events
    }
}
