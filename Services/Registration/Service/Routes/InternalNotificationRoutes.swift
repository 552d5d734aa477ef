import Foundation
import Hummingbird
import ServiceKit
import StudyModels

/// `POST /internal/v1/notifications`: study-metadata hands over due notifications (signed; only
/// study-metadata may call it). Each is resolved to the devices it goes to and queued for push.
struct InternalNotificationRoutes {
    struct Accepted: ResponseEncodable {
        var devices: Int
    }

    let audience: PushAudienceStore

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/notifications", use: receive)
    }

    @Sendable func receive(_ request: Request, context: ServiceRequestContext) async throws -> Accepted {
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
