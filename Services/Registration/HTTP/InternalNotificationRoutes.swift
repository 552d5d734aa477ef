import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/notifications`: study-metadata hands over due notifications (signed; only
/// study-metadata may call it). Each is resolved to the devices it goes to and queued for push.
package struct InternalNotificationRoutes {
    package struct Accepted: ResponseEncodable {
        package var devices: Int
    }

    package let audience: PushAudienceStore

    package init(audience: PushAudienceStore) {
        self.audience = audience
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/notifications", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Accepted {
        try context.requireCaller(.studyMetadata, "sends notifications")
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let batch = try? decoder.decode(NotificationBatch.self, from: Data(buffer: buffer)) else {
            throw APIError.badRequest("the body is not a notification batch")
        }
        return Accepted(devices: try await audience.receive(batch))
    }
}
