import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit

/// Verifies the signature of every request under `/internal`; nothing there is reachable
/// without it.
///
/// Checks, in order: the four headers are present, the caller is known, the timestamp is within
/// five minutes of this clock, the HMAC matches one of the caller's keys, and the nonce has not
/// been seen. The nonce is recorded only after the signature is verified, so unauthenticated
/// traffic cannot fill the nonce table.
public struct InternalAuthMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext

    let keys: InternalKeys
    let nonces: NonceStore
    let now: @Sendable () -> Date

    public init(keys: InternalKeys, nonces: NonceStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.keys = keys
        self.nonces = nonces
        self.now = now
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let caller = try await verify(&request, context: context)
        context.internalCaller = caller
        context.logger[metadataKey: "internal_caller"] = .string(caller)
        return try await next(request, context)
    }

    private func verify(_ request: inout Request, context: Context) async throws -> String {
        func header(_ name: String) throws -> String {
            guard let fieldName = HTTPField.Name(name), let value = request.headers[fieldName], !value.isEmpty else {
                throw APIError.unauthenticated("missing \(name) header")
            }
            return value
        }
        let caller = try header(RequestSignature.serviceHeader)
        let timestampText = try header(RequestSignature.timestampHeader)
        let nonce = try header(RequestSignature.nonceHeader)
        let signature = try header(RequestSignature.signatureHeader)

        guard let callerKeys = keys.callerKeys[caller], !callerKeys.isEmpty else {
            throw APIError.unauthenticated("unknown caller \"\(caller.prefix(64))\"")
        }
        guard let timestamp = Int64(timestampText) else {
            throw APIError.unauthenticated("\(RequestSignature.timestampHeader) must be Unix seconds")
        }
        let skew = now().timeIntervalSince1970 - Double(timestamp)
        guard abs(skew) <= RequestSignature.allowedClockSkew else {
            throw APIError.unauthenticated("request timestamp is more than five minutes from the server clock")
        }
        guard RequestSignature.isWellFormedNonce(nonce) else {
            throw APIError.unauthenticated("\(RequestSignature.nonceHeader) must be 16 to 128 URL-safe characters")
        }

        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let canonical = RequestSignature.canonicalString(
            caller: caller,
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query ?? "",
            timestamp: timestamp,
            nonce: nonce,
            body: body.readableBytesView)
        guard callerKeys.contains(where: { RequestSignature.isValid(signature: signature, for: canonical, key: $0) }) else {
            throw APIError.unauthenticated("signature does not match")
        }

        // A request stays acceptable until its timestamp is five minutes old; remember the
        // nonce a little longer than that.
        let expiresAt = Date(timeIntervalSince1970: Double(timestamp) + RequestSignature.allowedClockSkew + 60)
        guard try await nonces.remember(caller: caller, nonce: nonce, expiresAt: expiresAt) else {
            throw APIError.unauthenticated("nonce already used")
        }
        return caller
    }
}
