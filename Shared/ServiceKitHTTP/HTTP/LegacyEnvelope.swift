import Hummingbird
import HummingbirdCore
import JSONText
import NIOCore

/// The parameters of a call to an API the MyStudies apps learned from the original servers: in
/// the query string, or in a JSON object body, or both (iOS and Android differ, and the order of
/// members is free). A body member wins over a query parameter of the same name. The three
/// services read their app APIs through this one parser.
public struct LegacyEnvelope: Sendable {
    /// Query parameters (as strings) and the body's members, parsed; with `keepingCompoundText`,
    /// only the body's scalar members.
    public var parameters: JSONObject
    /// With `keepingCompoundText`, the body's object and array members as the JSON text they
    /// arrived as, so a large member (a survey response) is passed on without being built.
    public var compound: [String: String]

    /// Every parameter name, simple or compound.
    public var names: Set<String> { Set(parameters.keys).union(compound.keys) }

    /// The request's query parameters alone (an API that only takes GET).
    public init(query request: Request) {
        var parameters: JSONObject = [:]
        if let query = request.uri.query {
            for (name, value) in HummingbirdCore.URI.formPairs(query) { parameters[name] = .string(value) }
        }
        self.parameters = parameters
        self.compound = [:]
    }

    /// Reads the query string and the body (up to the upload limit). A body that is present but
    /// is not one JSON object throws `notAnObject`, which each API answers in its own format.
    public static func read(
        _ request: Request, context: ServiceRequestContext, keepingCompoundText: Bool = false, notAnObject: any Error
    ) async throws -> LegacyEnvelope {
        var envelope = LegacyEnvelope(query: request)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        guard body.readableBytes > 0 else { return envelope }
        guard let members = members(ofBody: Array(body.readableBytesView), keepingCompoundText: keepingCompoundText) else {
            throw notAnObject
        }
        for (name, value, text) in members {
            envelope.parameters[name] = value
            envelope.compound[name] = text
        }
        return envelope
    }

    /// A body's members, each parsed, or kept as its text (`keepingCompoundText`, for an object or
    /// array); nil when the body is not one JSON object, or builds more than one call's budget
    /// (docs/security.md, Budgets). The whole of what `read` does with the bytes an app sends, so
    /// it can be fuzzed without a request.
    public static func members(ofBody bytes: [UInt8], keepingCompoundText: Bool) -> [(name: String, value: JSONValue?, text: String?)]? {
        bytes.withUnsafeBufferPointer { buffer -> [(name: String, value: JSONValue?, text: String?)]? in
            // One budget for the whole body: its members together build no more than it allows.
            var budget = JSONValue.Budget.requestParameters(maxBytes: buffer.count)
            guard let members = try? JSONValue.members(ofObject: buffer, budget: budget) else { return nil }
            budget.maxNodes -= members.count
            var read: [(name: String, value: JSONValue?, text: String?)] = []
            read.reserveCapacity(members.count)
            for member in members {
                let slice = UnsafeBufferPointer(rebasing: buffer[member.value])
                if keepingCompoundText, let first = slice.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                    read.append((member.name, nil, String(decoding: slice, as: UTF8.self)))
                } else {
                    guard let value = try? JSONValue.parse(slice, sharing: &budget) else { return nil }
                    read.append((member.name, value, nil))
                }
            }
            return read
        }
    }
}
