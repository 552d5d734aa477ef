import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/studies/{studyId}/property-dates`: the response service's outbox sends
/// participants' date properties (signed; only the response service may call it), which
/// schedules anchored to a property count from. Repeated or late deliveries change nothing more.
package struct InternalPropertyDateRoutes {
    package let dates: PropertyDateStore

    package init(dates: PropertyDateStore) {
        self.dates = dates
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.propertyDates, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<PropertyDates>) async throws -> PropertyDatesKept {
        PropertyDatesKept(kept: try await dates.record(call.body, studyId: try call.parameter("studyId")))
    }
}
