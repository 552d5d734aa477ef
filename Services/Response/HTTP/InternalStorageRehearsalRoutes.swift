import Foundation
import Hummingbird
import JSONText
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/studies/{studyId}/storage-rehearsals`: study-metadata asks, before it
/// freezes a version, whether the study's tables can hold a response to each activity (signed;
/// only study-metadata may call it). The study need not be known here yet: its first version is
/// rehearsed before any event about it is sent.
package struct InternalStorageRehearsalRoutes {
    package let rehearsal: StorageRehearsal

    package init(rehearsal: StorageRehearsal) {
        self.rehearsal = rehearsal
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/studies/:studyId/storage-rehearsals", use: rehearse)
    }

    @Sendable package func rehearse(_ request: Request, context: ServiceRequestContext) async throws -> StorageRehearsalReply {
        try context.requireCaller(.studyMetadata, "checks that a study's answers can be stored")
        let studyId = try context.parameters.decoded("studyId")
        guard Identifiers.isValid(studyId) else { throw APIError.badRequest("the study id \(Identifiers.rule)") }
        let budget = JSONValue.Budget.storageRehearsal
        let body = try await request.body.collect(upTo: budget.maxBytes)
        guard let root = try? JSONValue.parse(body.readableBytesView, budget: budget), case .array(let designs)? = root["designs"],
            designs.allSatisfy({ if case .object = $0 { true } else { false } })
        else { throw APIError.badRequest("the body must be {\"designs\": [activity designs]}") }
        return StorageRehearsalReply(problems: try await rehearsal.problems(studyId: studyId, designs: designs))
    }
}

extension StorageRehearsalReply: ResponseEncodable {}
