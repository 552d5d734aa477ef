import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import StudyModels

/// One notification as a device receives it.
package struct PushMessage: Sendable, Equatable {
    package var title: String
    package var body: String
    /// The keys the MyStudies apps read (`type`, `subtype`, `studyId`, ...), all strings.
    package var data: [String: String]
    /// The same for every attempt at one push (`push-<outbox id>`). A worker that dies after the
    /// provider accepted a push but before recording it leaves the push to be sent again; APNs
    /// shows notifications with one collapse id as one, so the device shows it once.
    package var collapseId: String
}

/// What one delivery attempt came to.
package enum PushOutcome: Sendable, Equatable {
    /// Accepted; the provider's id for it.
    case delivered(String)
    /// The provider says the token is no longer valid: remove it from the device's session.
    case unregistered(String)
    /// Worth trying again (provider busy or down, a network error, an expired provider token).
    case retry(String)
    /// Not worth repeating (a refused payload, credentials the provider rejects).
    case failed(String)
}

/// Apple Push Notification service over HTTP/2 with token authentication: an ES256 JWT
/// (`kid` the key id, `iss` the team id, `iat` now) in `authorization: bearer`. Apple rejects a
/// provider token refreshed more often than every 20 minutes or older than an hour, so each
/// key's token is reused for 50 minutes.
package struct APNsSender: Sendable {
    package struct Claims: JWTPayload {
        package var iss: String
        package var iat: Int
        package func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    package let httpClient: HTTPClient
    package let productionURL: String
    package let sandboxURL: String
    package let tokens = ProviderTokenCache()

    package func send(
        _ message: PushMessage, to deviceToken: String, with credentials: APNsCredentials, key: ES256PrivateKey,
        logger: Logger
    ) async -> PushOutcome {
        let cacheKey = "apns:\(credentials.teamId):\(credentials.keyId)"
        do {
            let jwt = try await tokens.token(for: cacheKey) {
                let keys = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: credentials.keyId))
                let token = try await keys.sign(
                    Claims(iss: credentials.teamId, iat: Int(Date().timeIntervalSince1970)),
                    kid: JWKIdentifier(string: credentials.keyId))
                return (token, .seconds(50 * 60))
            }
            let base = credentials.environment == .production ? productionURL : sandboxURL
            var request = HTTPClientRequest(url: "\(base)/3/device/\(deviceToken)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            request.headers.add(name: "apns-topic", value: credentials.topic)
            request.headers.add(name: "apns-push-type", value: "alert")
            request.headers.add(name: "apns-priority", value: "10")
            request.headers.add(name: "apns-collapse-id", value: message.collapseId)
            request.headers.add(name: "apns-expiration", value: String(Int(Date().timeIntervalSince1970) + 86_400))
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try Self.payload(message)))
            let response = try await httpClient.execute(request, timeout: .seconds(30), logger: logger)
            let body = try await response.body.collect(upTo: 64 * 1024)
            let reason = (try? JSONDecoder().decode(JSONObject.self, from: Data(buffer: body)))?["reason"]?.text ?? ""
            switch (response.status.code, reason) {
            case (200, _):
                return .delivered(response.headers.first(name: "apns-id") ?? "")
            case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
                return .unregistered("APNs \(response.status.code) \(reason)")
            case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
                await tokens.forget(cacheKey)
                return .retry("APNs 403 \(reason)")
            case (429, _), (500...599, _):
                return .retry("APNs \(response.status.code) \(reason)")
            default:
                return .failed("APNs \(response.status.code) \(reason)")
            }
        } catch {
            return .retry("APNs unreachable: \(error)")
        }
    }

    /// `aps.alert` with the title and text, and the app's keys beside `aps`.
    package static func payload(_ message: PushMessage) throws -> Data {
        var payload = JSONObject(message.data.mapValues { JSONValue.string($0) })
        payload["aps"] = .object([
            "alert": .object(["title": .string(message.title), "body": .string(message.body)]),
            "sound": .string("default"),
        ])
        return try JSONEncoder().encode(payload)
    }
}

/// Firebase Cloud Messaging HTTP v1: the service account signs an RS256 assertion, exchanges it
/// at its `token_uri` for an OAuth access token (kept until a minute before it expires), and
/// posts each message to `projects/{project}/messages:send`. The message is data-only with the
/// keys the MyStudies Android app reads (`type`, `subtype`, `title`, `message`, `studyId`).
package struct FCMSender: Sendable {
    package struct Claims: JWTPayload {
        package var iss: String
        package var scope: String
        package var aud: String
        package var iat: Int
        package var exp: Int
        package func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    package struct TokenReply: Decodable {
        package var access_token: String
        package var expires_in: Int?
    }

    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    package let httpClient: HTTPClient
    package let baseURL: String
    package let tokens = ProviderTokenCache()

    package func send(
        _ message: PushMessage, to deviceToken: String, with account: FCMServiceAccount, key: FCMSigningKey,
        logger: Logger
    ) async -> PushOutcome {
        let cacheKey = "fcm:\(account.clientEmail)"
        let accessToken: String
        do {
            accessToken = try await tokens.token(for: cacheKey) {
                try await exchange(account: account, key: key, logger: logger)
            }
        } catch let failure as PushOutcomeError {
            return failure.outcome
        } catch {
            return .retry("FCM token exchange failed: \(error)")
        }
        do {
            var request = HTTPClientRequest(url: "\(baseURL)/v1/projects/\(account.projectId)/messages:send")
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
            request.headers.add(name: "content-type", value: "application/json")
            var data = message.data
            data["title"] = message.title
            data["message"] = message.body
            let body: JSONValue = .object([
                "message": .object([
                    "token": .string(deviceToken),
                    "data": .object(JSONObject(data.mapValues { JSONValue.string($0) })),
                    "android": .object(["priority": .string("HIGH")]),
                ])
            ])
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
            let response = try await httpClient.execute(request, timeout: .seconds(30), logger: logger)
            let reply = try await response.body.collect(upTo: 64 * 1024)
            let json = try? JSONValue.parse(reply.readableBytesView, budget: .peerReply)
            let status = json?["error"]?["status"]?.text ?? ""
            var errorCode = ""
            if case .array(let details)? = json?["error"]?["details"] {
                errorCode = details.compactMap { $0["errorCode"]?.text }.first ?? ""
            }
            switch (response.status.code, errorCode) {
            case (200, _):
                return .delivered(json?["name"]?.text ?? "")
            case (404, _), (_, "UNREGISTERED"):
                return .unregistered("FCM \(response.status.code) \(errorCode.isEmpty ? status : errorCode)")
            case (401, _):
                await tokens.forget(cacheKey)
                return .retry("FCM 401 \(status)")
            case (429, _), (500...599, _):
                return .retry("FCM \(response.status.code) \(status)")
            default:
                return .failed("FCM \(response.status.code) \(errorCode.isEmpty ? status : errorCode)")
            }
        } catch {
            return .retry("FCM unreachable: \(error)")
        }
    }

    /// The OAuth 2.0 JWT-bearer grant (RFC 7523) at the service account's `token_uri`.
    package func exchange(account: FCMServiceAccount, key: FCMSigningKey, logger: Logger) async throws
        -> (String, Duration)
    {
        let now = Int(Date().timeIntervalSince1970)
        let keys = await JWTKeyCollection().add(
            rsa: key, digestAlgorithm: .sha256, kid: account.privateKeyId.map { JWKIdentifier(string: $0) })
        let assertion = try await keys.sign(
            Claims(iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: now, exp: now + 3600),
            kid: account.privateKeyId.map { JWKIdentifier(string: $0) })
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(
            string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response = try await httpClient.execute(request, timeout: .seconds(30), logger: logger)
        let body = try await response.body.collect(upTo: 64 * 1024)
        switch response.status.code {
        case 200:
            let reply = try JSONDecoder().decode(TokenReply.self, from: Data(buffer: body))
            return (reply.access_token, .seconds(max((reply.expires_in ?? 3600) - 60, 60)))
        case 400, 401, 403:
            // invalid_grant and the like: the credentials themselves are refused.
            throw PushOutcomeError(outcome: .failed("FCM token exchange refused: \(response.status.code)"))
        default:
            throw PushOutcomeError(outcome: .retry("FCM token exchange: \(response.status.code)"))
        }
    }
}

package struct PushOutcomeError: Error {
    package var outcome: PushOutcome
}

/// Provider tokens (APNs JWTs, FCM access tokens) kept until shortly before they expire, one per
/// key; `forget` drops one the provider refused.
package actor ProviderTokenCache {
    private var tokens: [String: (token: String, until: ContinuousClock.Instant)] = [:]

    package func token(for key: String, make: @Sendable () async throws -> (String, Duration)) async throws -> String {
        if let cached = tokens[key], cached.until > .now { return cached.token }
        let (token, lifetime) = try await make()
        tokens[key] = (token, .now + lifetime)
        return token
    }

    package func forget(_ key: String) {
        tokens[key] = nil
    }
}
