import Foundation
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// Asks study-metadata about a study a participant names. Registration keeps no copy of the
/// studies: the calls that need one (a consent upload) are rare, and a copy would be one more
/// thing to keep in step.
package struct StudyDirectory: Sendable {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package struct Unavailable: Error {}

    /// The published study's app and status; nil when study-metadata has no published study by
    /// that id. Throws `Unavailable` when study-metadata cannot say.
    package func standing(of studyId: String, logger: Logger) async throws -> StudyStanding? {
        let response: InternalClient.Reply
        do {
            response = try await client.send(.GET, to: .studyMetadata, path: InternalPaths.studyStanding(studyId: studyId), logger: logger)
        } catch {
            logger.warning("study-metadata unreachable for a study check", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
        switch response.status.code {
        case 200: return try response.decode(StudyStanding.self)
        case 404: return nil
        default:
            logger.warning("study-metadata refused a study check", metadata: ["status": "\(response.status.code)"])
            throw Unavailable()
        }
    }

    /// What the study schedules at its newest published version (`StudySchedule`); nil when
    /// study-metadata has none published by that id. Throws `Unavailable` when it cannot say.
    package func schedule(of studyId: String, logger: Logger) async throws -> StudySchedule? {
        let response: InternalClient.Reply
        do {
            response = try await client.send(.GET, to: .studyMetadata, path: InternalPaths.studySchedule(studyId: studyId), logger: logger)
        } catch {
            logger.warning("study-metadata unreachable for a study's schedule", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
        switch response.status.code {
        case 200:
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(StudySchedule.self, from: Data(response.body.readableBytesView))
        case 404: return nil
        default:
            logger.warning("study-metadata refused a schedule", metadata: ["status": "\(response.status.code)"])
            throw Unavailable()
        }
    }
}
