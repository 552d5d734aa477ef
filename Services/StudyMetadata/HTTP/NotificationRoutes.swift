import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// App-wide announcements (`/admin/v1/apps/{appId}/notifications`) and, for operators, the
/// outbox of calls to the other services (`/admin/v1/outbox`).
package struct NotificationRoutes {
    package struct OutboxList: ResponseEncodable {
        package var messages: [Outbox.Message]
    }

    package let notifications: NotificationStore
    package let apps: AppStore
    package let outbox: Outbox
    package let authenticator: AdminTokenAuthenticator
    package let audit: AuditLog

    package init(
        notifications: NotificationStore, apps: AppStore, outbox: Outbox, authenticator: AdminTokenAuthenticator,
        audit: AuditLog
    ) {
        self.notifications = notifications
        self.apps = apps
        self.outbox = outbox
        self.authenticator = authenticator
        self.audit = audit
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/apps/:appId/notifications", use: announce)
        router.get("/admin/v1/apps/:appId/notifications", use: list)
        router.get("/admin/v1/outbox", use: outboxMessages)
    }

    @Sendable package func announce(
        _ request: Request, context: ServiceRequestContext
    ) async throws -> EditedResponse<NotificationStore.Record> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let appId = try context.parameters.require("appId")
        let body = try await DocumentBody.decode(AppAnnouncement.self, named: "announcement", from: request, context: context)
        var problems: [ValidationProblem] = []
        let notificationId = body.notificationId ?? "announcement-\(UUID().uuidString.prefix(8).lowercased())"
        if !Identifiers.isValid(notificationId) {
            problems.append(.init(pointer: "/notificationId", message: Identifiers.rule))
        }
        if (body.text.translations[LocalizedText.defaultLanguage] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            problems.append(.init(pointer: "/text", message: "needs an English (\"en\") text"))
        }
        var due = Date()
        if let at = body.at {
            if let instant = Self.instant(at) { due = max(instant, due) } else {
                problems.append(.init(pointer: "/at", message: "must be an ISO 8601 date-time with an offset, like 2026-12-01T09:00:00Z"))
            }
        }
        guard problems.isEmpty else { throw DocumentBody.rejected(problems, in: "announcement") }
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        guard let record = try await notifications.announce(
            appId: appId, notificationId: notificationId, title: body.title, message: body.text, at: due,
            by: admin.email, audit: audit)
        else { throw APIError.conflict("app \(appId) already has a notification \(notificationId)") }
        return EditedResponse(status: .created, response: record)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AppNotificationList {
        _ = try await authenticator.authenticate(request)
        let appId = try context.parameters.require("appId")
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        return AppNotificationList(notifications: try await notifications.list(appId: appId))
    }

    /// Undelivered messages first (what an operator looks for), then the most recent ones.
    @Sendable package func outboxMessages(_ request: Request, context: ServiceRequestContext) async throws -> OutboxList {
        _ = try await authenticator.requireSuperAdmin(request)
        let flag = request.uri.formParameters["undelivered"].map(String.init)
        guard flag == nil || flag == "true" || flag == "false" else {
            throw APIError.badRequest("undelivered must be true or false", field: "undelivered")
        }
        let undelivered = flag == "true"
        return OutboxList(messages: undelivered ? try await outbox.undelivered() : try await outbox.recent())
    }

    package static func instant(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

extension NotificationStore.Record: ResponseEncodable {}
extension AppNotificationList: ResponseEncodable {}
