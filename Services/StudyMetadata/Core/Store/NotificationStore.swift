import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Notifications: those a study document defines, lifecycle messages ("the study is paused") and
/// app-wide announcements. Each is a row that becomes due at a time; `dispatchDue` hands due rows
/// to the registration service through the outbox and stamps them sent. Sent rows are what the
/// apps list in `/StudyMetaData/notifications`.
///
/// Anchor-relative notifications are per participant (each has their own anchor date), so they
/// are not rows here: the registration service schedules them from the study document.
package struct NotificationStore: Sendable {
    /// Where a notification comes from (shared with the console: StudyModels' AdminWire).
    package typealias Origin = AppNotificationRecord.Origin
    /// One notification, as the admin API lists it.
    package typealias Record = AppNotificationRecord

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package static let columns = """
        id, notification_id, app_id, study_id, origin, type, subtype, title::text, message::text, activity_id,
        resource_id, due_at, sent_at
        """

    // MARK: - Written with lifecycle actions (in their transaction)

    /// Forgets a study's notifications and messages (sent or not) when its test run ends: they
    /// reached testers only, and a scheduled one must be sent again after launch.
    package func forgetTestRun(studyId: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            "DELETE FROM notifications WHERE study_id = \(studyId) AND origin IN ('study', 'message')", logger: logger)
    }

    /// Brings the pending rows of study `studyId`'s document notifications in line with `planned`
    /// (`StudyNotificationPlan.due`; nil: the study sends nothing now). A sent notification is
    /// history and is not sent again, even if edited (give it a new id to send a new one). Pending
    /// rows not planned are dropped.
    package func syncStudyNotifications(
        studyId: String, appId: String, planned: [StudyNotificationPlan.Due]?, by actor: String, on connection: PostgresConnection
    ) async throws {
        guard let planned else {
            try await connection.query(
                "DELETE FROM notifications WHERE study_id = \(studyId) AND origin = 'study' AND sent_at IS NULL",
                logger: logger)
            return
        }
        var kept: [String] = []
        for item in planned {
            let (notification, due) = (item.notification, item.at)
            kept.append(notification.notificationId)
            let encoder = JSONEncoder()
            let title = try notification.title.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            let message = String(decoding: try encoder.encode(notification.text), as: UTF8.self)
            try await connection.query(
                """
                INSERT INTO notifications (source, notification_id, app_id, study_id, origin, type, subtype, title,
                    message, activity_id, resource_id, due_at, created_by)
                VALUES (\("study:\(studyId):\(notification.notificationId)"), \(notification.notificationId),
                    \(appId), \(studyId), 'study', 'Study', \(notification.subtype.rawValue), \(title)::jsonb,
                    \(message)::jsonb, \(notification.activityId), \(notification.resourceId), \(due), \(actor))
                ON CONFLICT (source) DO UPDATE SET
                    subtype = excluded.subtype, title = excluded.title, message = excluded.message,
                    activity_id = excluded.activity_id, resource_id = excluded.resource_id, due_at = excluded.due_at
                WHERE notifications.sent_at IS NULL
                """, logger: logger)
        }
        try await connection.query(
            """
            DELETE FROM notifications
            WHERE study_id = \(studyId) AND origin = 'study' AND sent_at IS NULL
              AND NOT (notification_id = ANY(\(kept)))
            """, logger: logger)
    }

    /// Queues a lifecycle message, due now.
    package func queueLifecycleMessage(
        studyId: String, appId: String, type: NotificationMessage.Kind, subtype: String, action: String,
        title: LocalizedText, message: LocalizedText, by actor: String, on connection: PostgresConnection
    ) async throws {
        let encoder = JSONEncoder()
        let id = "\(action)-\(UUID().uuidString.lowercased())"
        try await connection.query(
            """
            INSERT INTO notifications (source, notification_id, app_id, study_id, origin, type, subtype, title,
                message, due_at, created_by)
            VALUES (\("study:\(studyId):\(id)"), \(id), \(appId), \(studyId), 'lifecycle', \(type.rawValue), \(subtype),
                \(String(decoding: try encoder.encode(title), as: UTF8.self))::jsonb,
                \(String(decoding: try encoder.encode(message), as: UTF8.self))::jsonb, now(), \(actor))
            """, logger: logger)
    }

    // MARK: - Announcements

    /// Queues an app-wide announcement; nil when the app already has one with this id.
    package func announce(
        appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, at due: Date,
        by actor: String, audit: AuditLog
    ) async throws -> Record? {
        try await insertOnce(
            source: "app:\(appId):\(notificationId)", notificationId: notificationId, appId: appId, studyId: nil,
            origin: .announcement, type: .gateway, title: title, message: message, due: due, by: actor, audit: audit,
            event: "notification.announced", details: ["appId": appId, "notificationId": notificationId])
    }

    // MARK: - Study messages

    /// Queues a study admin's message to the study's participants, due now; nil when the study
    /// already has a notification with this id.
    package func sendStudyMessage(
        studyId: String, appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText,
        by actor: String, audit: AuditLog
    ) async throws -> Record? {
        try await insertOnce(
            source: "message:\(studyId):\(notificationId)", notificationId: notificationId, appId: appId, studyId: studyId,
            origin: .message, type: .study, title: title, message: message, due: nil, by: actor, audit: audit,
            event: "study.message_sent",
            details: ["notificationId": notificationId, "text": message.text(for: LocalizedText.defaultLanguage)])
    }

    /// A notification an admin writes (an announcement, a message), with its audit event, in one
    /// transaction; nil when a row with `source` exists already (a repeated id), and then nothing
    /// is written. `due`: nil for the database's now.
    private func insertOnce(
        source: String, notificationId: String, appId: String, studyId: String?, origin: Origin, type: NotificationMessage.Kind,
        title: LocalizedText?, message: LocalizedText, due: Date?, by actor: String, audit: AuditLog, event: String,
        details: [String: String]
    ) async throws -> Record? {
        try await client.withTransaction(logger: logger) { connection in
            let encoder = JSONEncoder()
            let title = try title.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            let rows = try await connection.query(
                """
                INSERT INTO notifications (source, notification_id, app_id, study_id, origin, type, subtype, title,
                    message, due_at, created_by)
                VALUES (\(source), \(notificationId), \(appId), \(studyId), \(origin.rawValue), \(type.rawValue),
                    'Announcement', \(title)::jsonb, \(String(decoding: try encoder.encode(message), as: UTF8.self))::jsonb,
                    coalesce(\(due), now()), \(actor))
                ON CONFLICT (source) DO NOTHING
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let record = try await Self.records(rows).first else { return nil }
            try await audit.record(actor: actor, action: event, studyId: studyId, details: details, on: connection)
            return record
        }
    }

    /// Every notification of a study (its own, lifecycle messages, admins' messages), newest first.
    package func list(studyId: String, limit: Int = 200) async throws -> [Record] {
        try await Self.records(client.query(
            """
            SELECT \(unescaped: Self.columns) FROM notifications WHERE study_id = \(studyId)
            ORDER BY due_at DESC, id DESC LIMIT \(limit)
            """, logger: logger))
    }

    /// Every notification of an app (pending and sent), newest first.
    package func list(appId: String, limit: Int = 200) async throws -> [Record] {
        try await Self.records(client.query(
            """
            SELECT \(unescaped: Self.columns) FROM notifications WHERE app_id = \(appId)
            ORDER BY due_at DESC, id DESC LIMIT \(limit)
            """, logger: logger))
    }

    /// Sent notifications of an app, newest first: a page of the apps' notification list.
    package func sent(appId: String, skip: Int, limit: Int) async throws -> [Record] {
        try await Self.records(client.query(
            """
            SELECT \(unescaped: Self.columns) FROM notifications WHERE app_id = \(appId) AND sent_at IS NOT NULL
            ORDER BY sent_at DESC, id DESC OFFSET \(skip) LIMIT \(limit)
            """, logger: logger))
    }

    // MARK: - Dispatch

    /// Hands every due notification to the registration service (one outbox message per batch)
    /// and stamps it sent, in one transaction; returns how many went. Replicas may run it together:
    /// rows are claimed with `SKIP LOCKED`. Study notifications and admins' messages wait while their
    /// study is paused.
    @discardableResult
    package func dispatchDue(outbox: Outbox, audit: AuditLog, batchSize: Int = 100) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT n.id, n.notification_id, n.app_id, a.org_id, n.study_id, n.type, n.subtype,
                    coalesce(
                        n.title,
                        (SELECT v.document -> 'name' FROM study_versions v WHERE v.study_id = n.study_id
                         ORDER BY v.version DESC LIMIT 1),
                        a.definition -> 'name')::text,
                    n.message::text, n.activity_id, n.resource_id
                FROM notifications n
                JOIN apps a ON a.app_id = n.app_id
                LEFT JOIN studies s ON s.study_id = n.study_id
                WHERE n.sent_at IS NULL AND n.due_at <= now()
                  AND (n.origin NOT IN ('study', 'message') OR s.status = 'active')
                ORDER BY n.due_at, n.id
                LIMIT \(batchSize)
                FOR UPDATE OF n SKIP LOCKED
                """, logger: logger)
            var messages: [NotificationMessage] = []
            var titles: [String] = []
            let decoder = JSONDecoder()
            let now = Date()
            for try await (id, notificationId, appId, orgId, studyId, type, subtype, title, message, activityId, resourceId)
                in rows.decode((Int64, String, String, String, String?, String, String, String, String, String?, String?).self)
            {
                titles.append(title)
                messages.append(NotificationMessage(
                    id: id, notificationId: notificationId, appId: appId, orgId: orgId, studyId: studyId,
                    type: NotificationMessage.Kind(rawValue: type) ?? .study, subtype: subtype,
                    title: try decoder.decode(LocalizedText.self, from: Data(title.utf8)),
                    message: try decoder.decode(LocalizedText.self, from: Data(message.utf8)),
                    activityId: activityId, resourceId: resourceId, sentAt: now))
            }
            guard !messages.isEmpty else { return 0 }
            // The title is fixed as sent (the study's or app's name when the notification had none).
            try await connection.query(
                """
                UPDATE notifications n SET sent_at = \(now), title = t.title::jsonb
                FROM unnest(\(messages.map(\.id)), \(titles)) AS t(id, title)
                WHERE n.id = t.id
                """, logger: logger)
            try await outbox.enqueue(
                InternalCalls.notifications,
                payload: NotificationBatch(notifications: messages), on: connection)
            for message in messages {
                try await audit.record(
                    actor: "system", action: "notification.sent", studyId: message.studyId,
                    details: ["appId": message.appId, "notificationId": message.notificationId, "id": String(message.id)],
                    on: connection)
            }
            return messages.count
        }
    }

    // MARK: - Helpers


    package static func records(_ rows: PostgresRowSequence) async throws -> [Record] {
        var records: [Record] = []
        let decoder = JSONDecoder()
        for try await (id, notificationId, appId, studyId, origin, type, subtype, title, message, activityId, resourceId, due, sent)
            in rows.decode(
                (Int64, String, String, String?, String, String, String, String?, String, String?, String?, Date, Date?).self)
        {
            records.append(Record(
                id: id, notificationId: notificationId, appId: appId, studyId: studyId,
                origin: Origin(rawValue: origin) ?? .study, type: NotificationMessage.Kind(rawValue: type) ?? .study,
                subtype: subtype, title: try title.map { try decoder.decode(LocalizedText.self, from: Data($0.utf8)) },
                message: try decoder.decode(LocalizedText.self, from: Data(message.utf8)), activityId: activityId,
                resourceId: resourceId, dueAt: due, sentAt: sent))
        }
        return records
    }
}
