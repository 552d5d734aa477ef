import Foundation
import JSONText
import JWTKit
import ServiceKit

/// Why a token request is refused, as OAuth 2.0 (RFC 6749, 5.2) names it; the HTTP layer answers
/// 400, or 401 for `invalid_client`, with `{"error", "error_description"}`.
package struct SMARTTokenRefusal: Error, Sendable, Equatable {
    package enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
    }

    package var code: Code
    package var description: String

    package init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// The token endpoint of SMART Backend Services (docs/fhir.md, Authorisation): a registered
/// client asks with `client_credentials` and a JWT it signed with its private key (RS384 or
/// ES384), and gets a short-lived bearer token for its study's FHIR API, read-only.
package struct SMARTTokenIssuing: Sendable {
    package struct Issued: Sendable, Equatable {
        package var accessToken: String
        package var expiresIn: Int
        package var scope: String
    }

    /// An assertion's claims (RFC 7523 as SMART profiles it).
    struct AssertionClaims: JWTPayload {
        var iss: String
        var sub: String
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var jti: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    package static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// SMART: an assertion expires no more than five minutes after it is made.
    package static let maxAssertionLifetime: TimeInterval = 300
    package static let maxAssertionBytes = 16 << 10

    package let clients: SMARTClientStore
    /// The token endpoint's own URL, which every assertion must name as its audience.
    package let tokenURL: String
    package let tokenLifetime: Int

    package init(clients: SMARTClientStore, tokenURL: String, tokenLifetime: Int = 300) {
        self.clients = clients
        self.tokenURL = tokenURL
        self.tokenLifetime = tokenLifetime
    }

    /// Issues a token for the form's request, or says why not.
    package func issue(form: [String: String], now: Date = Date()) async throws -> Issued {
        guard form["grant_type"] == "client_credentials" else {
            throw SMARTTokenRefusal(.unsupportedGrantType, "grant_type must be client_credentials")
        }
        guard form["client_assertion_type"] == Self.assertionType else {
            throw SMARTTokenRefusal(.invalidRequest, "client_assertion_type must be \(Self.assertionType)")
        }
        guard let assertion = form["client_assertion"], !assertion.isEmpty, assertion.utf8.count <= Self.maxAssertionBytes else {
            throw SMARTTokenRefusal(.invalidRequest, "client_assertion must be a signed JWT")
        }
        guard let requested = form["scope"], !requested.isEmpty else {
            throw SMARTTokenRefusal(.invalidRequest, "scope is required (for example system/*.rs)")
        }
        let (client, claims) = try await verified(assertion, now: now)
        guard let grant = SMARTScopes.grant(requested: requested) else {
            throw SMARTTokenRefusal(.invalidScope, "no scope asked for reads anything this server serves (for example system/*.rs)")
        }
        guard try await clients.useAssertion(clientId: client.clientId, jti: claims.jti, expiresAt: claims.exp.value) else {
            throw SMARTTokenRefusal(.invalidClient, "this assertion's jti was used before: make a new assertion for each request")
        }
        let token = SecureToken.generate()
        try await clients.issue(
            tokenHash: SecureToken.hash(token), clientId: client.clientId, studyKey: client.studyKey, grant: grant,
            expiresAt: now.addingTimeInterval(TimeInterval(tokenLifetime)))
        return Issued(accessToken: token, expiresIn: tokenLifetime, scope: grant.text)
    }

    /// The assertion's client and claims, once its signature, audience and expiry hold.
    private func verified(_ assertion: String, now: Date) async throws -> (SMARTClientStore.Client, AssertionClaims) {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let header = try? JSONValue.parse(headerBytes, budget: Self.partBudget),
            let payload = try? JSONValue.parse(payloadBytes, budget: Self.partBudget)
        else { throw SMARTTokenRefusal(.invalidClient, "client_assertion is not a JWT (three base64url parts of JSON)") }
        guard let alg = header["alg"]?.string, let algorithm = SMARTClientKeys.Algorithm(rawValue: alg) else {
            throw SMARTTokenRefusal(.invalidClient, "the assertion must be signed with RS384 or ES384")
        }
        guard let kid = header["kid"]?.string, !kid.isEmpty else {
            throw SMARTTokenRefusal(.invalidClient, "the assertion's header must name its key (kid)")
        }
        guard let issuer = payload["iss"]?.string, !issuer.isEmpty, issuer.utf8.count <= 256,
            let client = try await clients.client(issuer), client.revokedAt == nil
        else { throw SMARTTokenRefusal(.invalidClient, "the assertion's iss is not a registered client of this server") }
        guard case .array(let keys)? = client.jwks["keys"],
            let key = keys.first(where: { $0["kid"]?.string?.unicodeScalars.elementsEqual(kid.unicodeScalars) == true }),
            key["alg"]?.string == algorithm.rawValue
        else { throw SMARTTokenRefusal(.invalidClient, "the client has no \(alg) key with kid \(kid)") }
        let claims: AssertionClaims
        do {
            let jwk = try JSONDecoder().decode(JWK.self, from: Data(key.serialized().utf8))
            let collection = JWTKeyCollection()
            try await collection.add(jwk: jwk)
            claims = try await collection.verify(assertion, as: AssertionClaims.self)
        } catch {
            throw SMARTTokenRefusal(.invalidClient, "the assertion's signature does not verify with the client's key \(kid), or its claims are malformed")
        }
        guard claims.sub.unicodeScalars.elementsEqual(client.clientId.unicodeScalars),
            claims.iss.unicodeScalars.elementsEqual(client.clientId.unicodeScalars)
        else { throw SMARTTokenRefusal(.invalidClient, "the assertion's iss and sub must both be the client id") }
        guard claims.aud.value.contains(where: { $0.unicodeScalars.elementsEqual(tokenURL.unicodeScalars) }) else {
            throw SMARTTokenRefusal(.invalidClient, "the assertion's aud must be this token endpoint, \(tokenURL)")
        }
        guard claims.exp.value > now else { throw SMARTTokenRefusal(.invalidClient, "the assertion has expired") }
        guard claims.exp.value <= now.addingTimeInterval(Self.maxAssertionLifetime + 5) else {
            throw SMARTTokenRefusal(.invalidClient, "the assertion's exp must be no more than five minutes ahead")
        }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else {
            throw SMARTTokenRefusal(.invalidClient, "the assertion needs a jti of 1 to 256 bytes")
        }
        return (client, claims)
    }

    private static let partBudget = JSONValue.Budget(maxBytes: maxAssertionBytes, maxNodes: 256, maxDepth: 8)
}
