import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// App-wide announcements (`/admin/v1/apps/{appId}/notifications`), a study's notifications and
/// its admins' messages sent now (`/admin/v1/studies/{studyId}/notifications`) and, for
/// operators, the outbox of calls to the other services (`/admin/v1/outbox`).
package struct NotificationRoutes {
    package struct OutboxList: ResponseEncodable {
        package var messages: [Outbox.Message]
    }

    package let announcements: Announcements
    package let messages: StudyMessages
    /// The apps and their notifications, read as stored.
    package let apps: AppStore
    package let notifications: NotificationStore
    package let outbox: Outbox

    package init(
        announcements: Announcements, messages: StudyMessages, apps: AppStore, notifications: NotificationStore, outbox: Outbox
    ) {
        self.announcements = announcements
        self.messages = messages
        self.apps = apps
        self.notifications = notifications
        self.outbox = outbox
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.announce, use: announce)
        routes.on(AdminCalls.appNotifications, use: list)
        routes.on(AdminCalls.sendMessage, use: sendMessage)
        routes.on(AdminCalls.studyNotifications, use: studyNotifications)
        routes.on(AdminCalls.outbox, use: outboxMessages)
    }

    /// A message to the study's participants now: the study admin's, as the lifecycle actions
    /// that notify participants are.
    @Sendable package func sendMessage(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<NotificationStore.Record> {
        let studyId = try context.parameters.decoded("studyId")
        let body = try await DocumentBody.decode(StudyMessage.self, named: "message", from: request, context: context)
        return EditedResponse(status: .created, response: try await messages.send(body, studyId: studyId, by: admin.email))
    }

    @Sendable package func studyNotifications(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyNotificationList {
        let studyId = try context.parameters.decoded("studyId")
        return StudyNotificationList(notifications: try await messages.list(studyId: studyId))
    }

    @Sendable package func announce(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<NotificationStore.Record> {
        let appId = try context.parameters.decoded("appId")
        let body = try await DocumentBody.decode(AppAnnouncement.self, named: "announcement", from: request, context: context)
        return EditedResponse(status: .created, response: try await announcements.announce(body, appId: appId, by: admin.email))
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> AppNotificationList {
        let appId = try context.parameters.decoded("appId")
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        return AppNotificationList(notifications: try await notifications.list(appId: appId))
    }

    /// Undelivered messages first (what an operator looks for), then the most recent ones.
    @Sendable package func outboxMessages(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> OutboxList {
        let flag = request.uri.formParameters["undelivered"].map(String.init)
        guard flag == nil || flag == "true" || flag == "false" else {
            throw APIError.badRequest("undelivered must be true or false", field: "undelivered")
        }
        let undelivered = flag == "true"
        return OutboxList(messages: undelivered ? try await outbox.undelivered() : try await outbox.recent())
    }
}

extension NotificationStore.Record: ResponseEncodable {}
extension AppNotificationList: ResponseEncodable {}
extension StudyNotificationList: ResponseEncodable {}
