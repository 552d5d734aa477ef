import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/studies/{studyId}/property-dates`: the response service's outbox sends
/// participants' date properties (signed; only the response service may call it), which
/// schedules anchored to a property count from. Repeated or late deliveries change nothing more.
package struct InternalPropertyDateRoutes {
    package struct Received: ResponseEncodable {
        package var kept: Int
    }

    package let dates: PropertyDateStore

    package init(dates: PropertyDateStore) {
        self.dates = dates
    }

    /// The largest body: a full message of participants with a few dates each, well inside it.
    static let maxBody = 4 * 1024 * 1024

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.put("/v1/studies/:studyId/property-dates", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Received {
        try context.requireCaller(.response, "sends participants' date properties")
        let studyId = try context.parameters.require("studyId")
        let buffer = try await request.body.collect(upTo: Self.maxBody)
        guard let message = try? JSONDecoder().decode(PropertyDates.self, from: Data(buffer: buffer)), message.isWellFormed else {
            throw APIError.badRequest(
                "the body is not property dates: at most \(PropertyDates.maxParticipants) participants, each a 64-digit lowercase hex hash "
                    + "and at most \(PropertyDates.maxDates) yyyy-MM-dd dates by keys of 1 to 100 characters")
        }
        return Received(kept: try await dates.record(message, studyId: studyId))
    }
}
