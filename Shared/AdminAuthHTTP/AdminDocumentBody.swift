import Foundation
import Hummingbird
import JSONText
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Reads admin-API documents, turning a decoding failure into a 422 whose problem carries a
/// JSON Pointer, like validation problems. The open-ended JSON a document carries (a step's
/// extensions, a chart's configuration, a moved-in response's answers) is built within one budget
/// for the whole document; the body itself is bounded by the service's body limit.
public enum DocumentBody {
    /// The most values the open-ended fields of one document build together (docs/security.md,
    /// Budgets): the original servers' extensions are a handful of values a step.
    public static let maxOpenEndedValues = 262_144

    public static func decode<T: Decodable>(
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

extension Request {
    /// The `dryRun` query parameter of the endpoints that import: a dry run unless the caller
    /// says `dryRun=false`, so a request that forgets it writes nothing.
    public func dryRun() throws -> Bool {
        try flag("dryRun") ?? true
    }

    /// A query parameter that is `true` or `false`; nil when it is absent.
    public func flag(_ name: String) throws -> Bool? {
        switch uri.queryParameters.get(name) {
        case nil: nil
        case "true": true
        case "false": false
        default: throw APIError.badRequest("\(name) is true or false", field: name)
        }
    }
}

extension APIError {
    /// A 422 whose body lists the document's problems, each at its JSON Pointer.
    public static func invalid(_ message: String, problems: [ValidationProblem]) -> APIError {
        .invalid(message, problems: problems.map { AdminErrorBody.Problem(pointer: $0.pointer, message: $0.message) })
    }
}
