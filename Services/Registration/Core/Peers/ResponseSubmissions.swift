import Foundation
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// Asks the response service which responses arrived from a participant (a signed internal
/// call): the data a run's completion is read from.
package struct ResponseSubmissions: Sendable {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package struct Unavailable: Error {}

    /// The participant's responses received at or after `since`, newest first; none when the
    /// response service does not know the study (it has taken no response for it).
    package func submissions(studyId: String, appTokenSHA256: String, since: Date, logger: Logger) async throws -> ParticipantSubmissions {
        let formatter = ISO8601DateFormatter()
        let query = "since=" + (formatter.string(from: since).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let reply: InternalClient.Reply
        do {
            reply = try await client.send(
                .GET, to: .response, path: InternalPaths.participantSubmissions(studyId: studyId, appTokenSHA256: appTokenSHA256),
                query: query, logger: logger)
        } catch {
            logger.warning("the response service is unreachable for a participant's submissions", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
        switch reply.status.code {
        case 200:
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(ParticipantSubmissions.self, from: Data(reply.body.readableBytesView))
        case 404: return ParticipantSubmissions(submissions: [])
        default:
            logger.warning("the response service refused a participant's submissions", metadata: ["status": "\(reply.status.code)"])
            throw Unavailable()
        }
    }
}
