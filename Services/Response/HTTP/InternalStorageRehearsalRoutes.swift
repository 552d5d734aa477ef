import Foundation
import Hummingbird
import InternalContracts
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
        group.on(InternalCalls.storageRehearsals, use: rehearse)
    }

    @Sendable package func rehearse(_ call: InternalRequest<JSONBytes>) async throws -> StorageRehearsalReply {
        let studyId = try call.parameter("studyId")
        guard Identifiers.isValid(studyId) else { throw APIError.badRequest("the study id \(Identifiers.rule)") }
        guard let root = try? JSONValue.parse(call.body.bytes, budget: .storageRehearsal), case .array(let designs)? = root["designs"],
            designs.allSatisfy({ if case .object = $0 { true } else { false } })
        else { throw APIError.badRequest(InternalCalls.storageRehearsals.malformedBody) }
        return StorageRehearsalReply(problems: try await rehearsal.problems(studyId: studyId, designs: designs))
    }
}
