import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/notifications`: study-metadata hands over due notifications (signed; only
/// study-metadata may call it). Each is resolved to the devices it goes to and queued for push.
package struct InternalNotificationRoutes {
    package let audience: PushAudienceStore

    package init(audience: PushAudienceStore) {
        self.audience = audience
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.notifications, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<NotificationBatch>) async throws -> NotificationsAccepted {
        NotificationsAccepted(devices: try await audience.receive(call.body))
    }
}
