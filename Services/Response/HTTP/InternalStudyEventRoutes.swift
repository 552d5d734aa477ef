import Foundation
import Hummingbird
import InternalContracts
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/study-events`: study-metadata's outbox reports every lifecycle action
/// (signed; only study-metadata may call it). Repeated or late events are harmless: the newest
/// (by version, then time) is kept.
package struct InternalStudyEventRoutes {
    package let catalog: StudyCatalog
    package let properties: ParticipantPropertyStore

    package init(catalog: StudyCatalog, properties: ParticipantPropertyStore) {
        self.catalog = catalog
        self.properties = properties
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.studyEvents, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<StudyEvent>) async throws -> MessageApplied {
        let event = call.body
        guard Identifiers.isValid(event.studyId) else { throw APIError.badRequest("the study id \(Identifiers.rule)") }
        let outcome = try await catalog.apply(event)
        if case .idConflict(let stored) = outcome {
            throw APIError.conflict("study \(stored) exists here; study ids are unique whatever their case")
        }
        let applied = outcome == .applied
        // The participant-properties table follows the study's published properties (only ever
        // added to); a failure here answers 500 and study-metadata's outbox sends the event again.
        if applied && !event.participantProperties.isEmpty {
            try await properties.ensureTable(studyKey: StudyCatalog.key(event.studyId))
        }
        return MessageApplied(applied: applied)
    }
}
