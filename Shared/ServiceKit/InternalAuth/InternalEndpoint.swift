import Foundation
import NIOCore
import NIOHTTP1

/// What an internal call carries, as a body or a reply: how it is written to the wire and read
/// back. A `Codable` type is JSON in the one form every internal call uses (`InternalCoding`).
public protocol InternalPayload: Sendable {
    /// The `Content-Type` it is sent with (nil: none, for an empty body).
    static var contentType: String? { get }
    func wireBytes() throws -> [UInt8]
    static func fromWire(_ bytes: ByteBuffer) throws -> Self
    /// A check beyond the shape (counts, id formats) the receiver applies before the handler; a
    /// body that fails it is answered 400 with the endpoint's `malformedBody`, like one that does
    /// not decode.
    var isWellFormed: Bool { get }
}

extension InternalPayload {
    public var isWellFormed: Bool { true }
}

extension InternalPayload where Self: Codable {
    public static var contentType: String? { "application/json" }
    public func wireBytes() throws -> [UInt8] { Array(try InternalCoding.encoder.encode(self)) }
    public static func fromWire(_ bytes: ByteBuffer) throws -> Self {
        try InternalCoding.decoder.decode(Self.self, from: Data(bytes.readableBytesView))
    }
}

/// The JSON form of every internal and admin call: dates as ISO 8601, `/` unescaped. The one
/// place a coder for those APIs is configured; the outbox, the peer clients, the console's admin
/// client and every route's replies use it.
public enum InternalCoding {
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }

    /// Reads ISO 8601 dates with or without fractional seconds: a few replies carry times
    /// PostgreSQL wrote as text (`to_json` keeps microseconds).
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
        }
        return decoder
    }
}

/// The body of a call that sends none (a GET, a DELETE), or the reply of one answered 204.
public struct NoContent: InternalPayload, Equatable {
    public init() {}
    public static var contentType: String? { nil }
    public func wireBytes() throws -> [UInt8] { [] }
    public static func fromWire(_ bytes: ByteBuffer) throws -> NoContent { NoContent() }
}

/// JSON passed through as the bytes it is, for a receiver that reads it within a budget of its
/// own (`JSONValue.parse`) or a sender that builds it in pieces.
public struct JSONBytes: InternalPayload, Equatable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public static var contentType: String? { "application/json" }
    public func wireBytes() throws -> [UInt8] { bytes }
    public static func fromWire(_ bytes: ByteBuffer) throws -> JSONBytes { JSONBytes(Array(buffer: bytes)) }
}

/// A body passed through as the bytes it is (credentials sealed for their receiver).
public struct OpaqueBody: InternalPayload, Equatable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public static var contentType: String? { "application/octet-stream" }
    public func wireBytes() throws -> [UInt8] { bytes }
    public static func fromWire(_ bytes: ByteBuffer) throws -> OpaqueBody { OpaqueBody(Array(buffer: bytes)) }
}

/// One status an endpoint may refuse with, and what it means to its caller.
public struct InternalRefusal: Sendable, Equatable {
    public var status: Int
    public var meaning: String

    public init(_ status: Int, _ meaning: String) {
        self.status = status
        self.meaning = meaning
    }
}

/// What the documentation and its coverage test read of an endpoint, whatever its types.
public protocol InternalEndpointDescription: Sendable {
    var method: HTTPMethod { get }
    var template: String { get }
    var receiver: ServiceName { get }
    var callers: [ServiceName] { get }
    var answers: [Int] { get }
    var refusals: [InternalRefusal] { get }
}

/// One signed service-to-service endpoint, defined once: the caller builds its request from this,
/// the receiver mounts its route from it, and the OpenAPI coverage test reads it.
public struct InternalEndpoint<Body: InternalPayload, Reply: InternalPayload>: InternalEndpointDescription {
    public let method: HTTPMethod
    /// The path with `{name}` for each parameter, from `/internal/v1/`.
    public let template: String
    public let receiver: ServiceName
    /// The services that may call it; the receiver refuses any other with 403.
    public let callers: [ServiceName]
    /// What the callers do with it, as the 403 says: "only registration <purpose>".
    public let purpose: String
    /// The largest body the receiver reads (nil: the service's configured limit).
    public let maxBody: Int?
    /// The 400 for a body that does not decode or is not well formed.
    public let malformedBody: String
    /// The statuses whose body is a `Reply`, the first of which a handler answers by default.
    public let answers: [Int]
    /// The status a reply is answered with, when it is not `answers[0]`.
    public let status: @Sendable (Reply) -> Int
    /// The refusals a caller must tell apart; any other status is a failed call.
    public let refusals: [InternalRefusal]

    public init(
        _ method: HTTPMethod, _ template: String, receiver: ServiceName, callers: [ServiceName], purpose: String,
        maxBody: Int? = nil, malformedBody: String = "", answers: [Int]? = nil, status: (@Sendable (Reply) -> Int)? = nil,
        refusals: [InternalRefusal] = []
    ) {
        self.method = method
        self.template = template
        self.receiver = receiver
        self.callers = callers
        self.purpose = purpose
        self.maxBody = maxBody
        self.malformedBody = malformedBody
        let answers = answers ?? [Reply.self == NoContent.self ? 204 : 200]
        self.answers = answers
        let first = answers.first ?? 200
        self.status = status ?? { _ in first }
        self.refusals = refusals
    }

    /// The parameters named in the template, in order.
    public var parameterNames: [String] { PathTemplate(template).parameterNames }

    /// The template with each `{name}` replaced by its value, percent-encoded as one segment.
    public func path(_ parameters: [String: String]) throws -> String {
        switch PathTemplate(template).filled(parameters) {
        case .success(let path): return path
        case .failure(let missing):
            throw InternalCallError(peer: receiver, reason: "\(method) \(template) needs its \(missing.name)")
        }
    }

    /// The route as the receiver's router spells it under `prefix` (`{name}` as `:name`).
    public func routePattern(under prefix: String) -> String {
        PathTemplate(template).routePattern(under: prefix)
    }

    /// The refusal this status stands for, if the endpoint declares it.
    public func refusal(for status: Int) -> InternalRefusal? {
        refusals.first { $0.status == status }
    }
}

/// What a peer answered to a call: its reply, or one of the refusals the endpoint declares (with
/// the body it came with). A status the endpoint does not declare throws `InternalCallError`.
public enum InternalAnswer<Reply: InternalPayload>: Sendable {
    case answered(Reply)
    case refused(InternalRefusal, body: ByteBuffer)

    /// The reply; a declared refusal throws `InternalCallError` too, for callers to whom every
    /// refusal is a failure.
    public func reply(from peer: ServiceName) throws -> Reply {
        switch self {
        case .answered(let reply): return reply
        case .refused(let refusal, _): throw InternalCallError(peer: peer, reason: "refused \(refusal.status): \(refusal.meaning)")
        }
    }
}

/// The endpoints every service answers, and where internal endpoints live.
public enum InternalEndpoints {
    /// The router group every internal route is mounted under (`InternalAuthMiddleware` guards it).
    public static let prefix = "/internal"

    /// `GET /internal/v1/whoami` on `receiver`: which caller it authenticated, so an operator (or
    /// a caller about to make a long call) can check that the keys on both sides agree and that
    /// the peer is up.
    public static func whoami(on receiver: ServiceName) -> InternalEndpoint<NoContent, WhoAmIResponse> {
        InternalEndpoint(
            .GET, "/internal/v1/whoami", receiver: receiver, callers: ServiceName.allCases, purpose: "ask who they are")
    }
}

extension WhoAmIResponse: InternalPayload {}
