import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Reads admin-API documents, turning a decoding failure into a 422 whose problem carries a
/// JSON Pointer, like validation problems.
package enum DocumentBody {
    package static func decode<T: Decodable>(
        _ type: T.Type, named name: String, from request: Request, context: ServiceRequestContext
    ) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
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
