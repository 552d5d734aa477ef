import Foundation
import Hummingbird
import ServiceKit

/// JSON request bodies with errors that name the field at fault.
public enum JSONBody {
    /// Decodes the request body as `T`; a malformed body is a 400 naming the field.
    public static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, context: ServiceRequestContext, decoder: JSONDecoder = JSONDecoder()
    ) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else {
            throw APIError.badRequest("request body is empty; a JSON object is expected")
        }
        do {
            return try decoder.decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw apiError(for: error)
        }
    }

    /// A 400 whose message names the field (`items[2].name`) and what was wrong with it.
    public static func apiError(for error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return .badRequest("missing field '\(field)'", field: field)
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            return .badRequest("field '\(field)' must be \(describe(type))", field: field)
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return .badRequest("field '\(field)' must be \(describe(type)), not null", field: field)
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return .badRequest("request body is not valid JSON")
            }
            let field = path(context.codingPath)
            return .badRequest("field '\(field)' is invalid: \(context.debugDescription)", field: field)
        @unknown default:
            return .badRequest("request body could not be read")
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "(body)" : text
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "of type \(type)"
        }
    }
}
