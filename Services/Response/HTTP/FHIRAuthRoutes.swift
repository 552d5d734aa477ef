import FHIR
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JSONText
import NIOCore
import ResponseCore
import ServiceKit
import ServiceKitHTTP

/// SMART Backend Services on the FHIR API (docs/fhir.md, Authorisation):
///
/// - `GET /fhir/r4/.well-known/smart-configuration`: where the token endpoint is and what it takes.
/// - `POST /fhir/r4/auth/token`: `client_credentials` with a signed JWT assertion, answered with a
///   short-lived bearer token, or an OAuth error (`invalid_client` 401, the others 400).
package struct FHIRAuthRoutes {
    package let issuing: SMARTTokenIssuing
    /// Token requests per minute per client address (`RATE_LIMIT_PER_MINUTE`): each one that names
    /// a client costs a lookup and a signature check.
    package let rateLimiter: RateLimiter
    package let addresses: ClientAddressResolver

    package init(issuing: SMARTTokenIssuing, rateLimiter: RateLimiter, addresses: ClientAddressResolver) {
        self.issuing = issuing
        self.rateLimiter = rateLimiter
        self.addresses = addresses
    }

    /// The form of a token request: OAuth's parameters are short; an assertion is a few KiB.
    package static let maxFormBytes = 32 << 10

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/fhir/r4/.well-known/smart-configuration", use: configuration)
        router.post("/fhir/r4/auth/token", use: token)
    }

    @Sendable package func configuration(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let document = FHIRJSON.object([
            "token_endpoint": .string(issuing.tokenURL),
            "token_endpoint_auth_methods_supported": .array([.string("private_key_jwt")]),
            "token_endpoint_auth_signing_alg_values_supported": .array(SMARTClientKeys.Algorithm.allCases.map { .string($0.rawValue) }),
            "grant_types_supported": .array([.string("client_credentials")]),
            "scopes_supported": .array((["*"] + SMARTScopes.resourceTypes.sorted()).flatMap { type in
                [JSONValue.string("system/\(type).read"), .string("system/\(type).rs")]
            }),
            "capabilities": .array([.string("client-confidential-asymmetric")]),
        ])
        return Self.json(document, status: .ok, contentType: "application/json")
    }

    @Sendable package func token(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard try await rateLimiter.allow("fhir.token", from: addresses.resolve(request, context: context)) else {
            var response = Self.json(
                FHIRJSON.object([
                    "error": .string("temporarily_unavailable"),
                    "error_description": .string("too many token requests from this address; try again in a minute"),
                ]), status: .tooManyRequests, contentType: "application/json")
            response.headers[.retryAfter] = "60"
            return response
        }
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            return Self.refusal(SMARTTokenRefusal(.invalidRequest, "send the request as application/x-www-form-urlencoded"))
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxFormBytes)
        } catch {
            return Self.refusal(SMARTTokenRefusal(.invalidRequest, "the request is larger than \(Self.maxFormBytes) bytes"))
        }
        var form: [String: String] = [:]
        for (name, value) in URI.formPairs(String(buffer: body)) {
            // OAuth: a parameter sent twice makes the request invalid (RFC 6749, 3.1).
            guard form[name] == nil else { return Self.refusal(SMARTTokenRefusal(.invalidRequest, "\(name) is sent more than once")) }
            form[name] = value
        }
        do {
            let issued = try await issuing.issue(form: form)
            let reply = FHIRJSON.object([
                "access_token": .string(issued.accessToken), "token_type": .string("bearer"),
                "expires_in": FHIRJSON.integer(issued.expiresIn), "scope": .string(issued.scope),
            ])
            return Self.json(reply, status: .ok, contentType: "application/json")
        } catch let refusal as SMARTTokenRefusal {
            context.logger.notice("SMART token refused", metadata: ["error": "\(refusal.code.rawValue)", "reason": "\(refusal.description)"])
            return Self.refusal(refusal)
        }
    }

    static func refusal(_ refusal: SMARTTokenRefusal) -> Response {
        let body = FHIRJSON.object(["error": .string(refusal.code.rawValue), "error_description": .string(refusal.description)])
        var response = json(body, status: refusal.code == .invalidClient ? .unauthorized : .badRequest, contentType: "application/json")
        if refusal.code == .invalidClient { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }

    /// A JSON reply that no cache keeps (tokens, and what they read).
    static func json(_ value: JSONValue, status: HTTPResponse.Status, contentType: String) -> Response {
        var bytes: [UInt8] = []
        value.write(to: &bytes, sortedKeys: false)
        return Response(
            status: status,
            headers: [.contentType: contentType, .cacheControl: "no-store", .init("Pragma")!: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
