import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Reads admin-API documents, turning a decoding failure into a 422 whose problem carries a
/// JSON Pointer, like validation problems. The open-ended JSON a document carries (a step's
/// extensions, a chart's configuration) is built within one budget for the whole document.
package enum DocumentBody {
    /// The most values the open-ended fields of one document build together (docs/security.md,
    /// Budgets): the original servers' extensions are a handful of values a step.
    package static let maxOpenEndedValues = 262_144

    package static func decode<T: Decodable>(
        _ type: T.Type, named name: String, from request: Request, context: ServiceRequestContext,
        maxValues: Int = Self.maxOpenEndedValues
    ) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder.budgeted(maxNodes: maxValues).decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            let problem = JSONPointer.problem(for: error, document: name)
            throw APIError.invalid("the \(name) could not be read", problems: [problem])
        }
    }
}

extension APIError {
    /// A 422 whose body lists the document's problems, each at its JSON Pointer.
    package static func invalid(_ message: String, problems: [ValidationProblem]) -> APIError {
        .invalid(message, problems: problems.map { AdminErrorBody.Problem(pointer: $0.pointer, message: $0.message) })
    }
}
