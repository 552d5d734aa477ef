import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceKit
import ServiceLifecycle
import StudyModels

/// Sends processed responses to the study's forwarding target (docs/response-api.md, Forwarding),
/// one POST per response. Any replica may run it: a response is leased before it is sent, so two
/// workers never send the same one at once, and once the target answers 2xx it is `forwarded`
/// and never sent again. Anything else (3xx included, which the original counted as success) is
/// a failure, retried with backoff while the rest of the queue goes on.
///
/// A worker that dies between the target's answer and recording it leaves the lease to expire and
/// the response is sent again; each request carries `X-StudyStack-Response-Id` so a target can
/// recognise the repeat.
package final class ResponseForwarder: WorkQueue {
    /// One response a claim, leased for as long as its send can take (a token request and two
    /// posts at the 30 s request timeout): a response claimed by a round that failed (PostgreSQL
    /// went away) waits at most that long. Never given up: the study's admins see a failing
    /// target in the admin API.
    package static let policy = DrainPolicy(batchSize: 1, lease: .seconds(100), retry: RetryPolicy(maxAttempts: nil))
    package var policy: DrainPolicy { Self.policy }
    package let queueName = "forwarding"

    package let store: ForwardingStore
    package let tokens: TokenStore
    /// Checked before every request: the target is an address a study admin chose.
    package let addresses: OutboundAddressPolicy
    package let oauth: OAuthTokenCache
    /// Builds the transactions of studies that forward to a FHIR server.
    package let fhir: FHIRForwarding
    package let httpClient: HTTPClient
    package let metrics: ServiceMetrics
    package let logger: Logger

    package static let requestTimeout: TimeAmount = .seconds(30)

    package init(
        store: ForwardingStore, tokens: TokenStore, addresses: OutboundAddressPolicy, oauth: OAuthTokenCache,
        fhir: FHIRForwarding, httpClient: HTTPClient, metrics: ServiceMetrics, logger: Logger
    ) {
        self.store = store
        self.tokens = tokens
        self.addresses = addresses
        self.oauth = oauth
        self.fhir = fhir
        self.httpClient = httpClient
        self.metrics = metrics
        self.logger = logger
    }

    /// The client forwarding uses: redirects are not followed (a redirect would take the request,
    /// and a POST turned GET, to an address nobody checked).
    package static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func claim(limit: Int, lease: Duration) async throws -> [ForwardingStore.Lease] {
        try await store.lease(limit: limit, for: lease)
    }

    package func attempts(of lease: ForwardingStore.Lease) -> Int { lease.attempts + 1 }

    package func perform(_ lease: ForwardingStore.Lease) async -> WorkResult<Void> {
        var logger = self.logger
        logger[metadataKey: "response_id"] = "\(lease.responseId)"
        do {
            try await send(lease, using: httpClient)
            logger.info("response forwarded")
            return .done(())
        } catch let failure as Failure {
            return .failed(failure.message)
        } catch let unavailable as FHIRForwarding.Unavailable {
            return .failed(unavailable.description)
        } catch {
            return .failed(String(reflecting: error))
        }
    }

    package func complete(_ lease: ForwardingStore.Lease, with _: Void) async throws {
        try await store.markForwarded(lease)
    }

    package func fail(_ lease: ForwardingStore.Lease, reason: String, retryAfter: Duration?) async throws {
        try await store.markFailed(lease, error: reason, wait: retryAfter ?? Self.policy.retry.maxBackoff)
    }

    /// Why a send did not succeed, as the admin API shows it.
    package struct Failure: Error {
        package var message: String
    }

    private func send(_ lease: ForwardingStore.Lease, using httpClient: HTTPClient) async throws {
        guard let settings = try await store.settings(studyKey: lease.studyKey) else {
            throw Failure(message: "Forwarding is not configured.")
        }
        guard let target = settings.target.url else { throw Failure(message: "Forwarding is disabled.") }
        let body: Body
        var transaction: FHIRForwarding.Transaction?
        switch settings.format {
        case .json:
            let forwarded = ForwardedResponse(
                metadata: .init(activityid: lease.activityId, version: lease.version),
                token: try await tokens.token(ofParticipant: lease.participantId), data: lease.data)
            body = Body(bytes: try JSONEncoder().encode(forwarded), contentType: "application/json")
        case .fhir:
            let built = try await fhir.transaction(responseId: lease.responseId, studyKey: lease.studyKey, target: target)
            body = Body(bytes: Data(built.body), contentType: "application/fhir+json")
            transaction = built
        }
        switch settings.target {
        case .disabled:
            throw Failure(message: "Forwarding is disabled.")
        case .basic(let url, let username, let password):
            // Sent with the first request: the original waited for a 401 challenge.
            let credential = Data("\(username):\(password)".utf8).base64EncodedString()
            let status = try await post(body, to: url, header: ("Authorization", "Basic \(credential)"), lease: lease, using: httpClient)
            try Self.check(status)
        case .oauth(let tokenURL, let field, let header, let url):
            let key = OAuthTokenCache.Key(studyKey: lease.studyKey, settingsVersion: settings.updatedAt)
            var token = try await bearer(key, tokenURL: tokenURL, field: field, refresh: false, using: httpClient)
            var status = try await post(body, to: url, header: (header, "Bearer \(token)"), lease: lease, using: httpClient)
            if status == 401 {
                // A stale token: fetch a new one and try once more (the original's retry never ran).
                token = try await bearer(key, tokenURL: tokenURL, field: field, refresh: true, using: httpClient)
                status = try await post(body, to: url, header: (header, "Bearer \(token)"), lease: lease, using: httpClient)
            }
            try Self.check(status)
        }
        if let questionnaire = transaction?.questionnaire {
            // Not sent to this server again; should this record be lost, the next transaction
            // carries the version once more and the server's conditional create finds it.
            try await store.markQuestionnaireForwarded(
                studyKey: lease.studyKey, activityId: questionnaire.activityId, version: questionnaire.version,
                target: target.absoluteString)
        }
    }

    /// What a request carries: the original's JSON, or a FHIR transaction.
    private struct Body {
        var bytes: Data
        var contentType: String
    }

    /// Only the status is kept: the admin API shows this message, and a target's body (an
    /// internal page, say) is none of the admin's business.
    package static func check(_ status: UInt) throws {
        guard (200...299).contains(status) else {
            throw Failure(message: "The target answered \(status).")
        }
    }

    /// Refuses a target whose address the policy does not allow, resolved just before the request.
    private func checkAddress(_ url: URL) async throws {
        guard let host = URLComponents(url: url, resolvingAgainstBaseURL: false)?.host else {
            throw Failure(message: "The target URL has no host.")
        }
        if let refusal = await addresses.check(host: host) {
            throw Failure(message: "The target is not allowed: \(refusal).")
        }
    }

    private func post(
        _ body: Body, to url: URL, header: (String, String), lease: ForwardingStore.Lease, using httpClient: HTTPClient
    ) async throws -> UInt {
        try await checkAddress(url)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: body.contentType)
        request.headers.add(name: "Accept", value: body.contentType)
        request.headers.add(name: header.0, value: header.1)
        request.headers.add(name: "X-StudyStack-Response-Id", value: String(lease.responseId))
        request.body = .bytes(ByteBuffer(bytes: body.bytes))
        do {
            let response = try await httpClient.execute(request, timeout: Self.requestTimeout)
            // Read (and dropped) only so the connection can be reused.
            _ = try await response.body.collect(upTo: 64 * 1024)
            return response.status.code
        } catch {
            logger.info("forwarding target unreachable", metadata: ["error": "\(error)"])
            throw Failure(message: "Could not reach \(url.host ?? "the target").")
        }
    }

    private func bearer(
        _ key: OAuthTokenCache.Key, tokenURL: URL, field: String, refresh: Bool, using httpClient: HTTPClient
    ) async throws -> String {
        if !refresh, let cached = await oauth.token(for: key) { return cached }
        try await checkAddress(tokenURL)
        var request = HTTPClientRequest(url: tokenURL.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let token: String
        do {
            let response = try await httpClient.execute(request, timeout: Self.requestTimeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            guard (200...299).contains(response.status.code),
                case .object(let fields) = try JSONValue.parse(body.readableBytesView, budget: .peerReply),
                let value = fields[field]?.text, !value.isEmpty
            else { throw Failure(message: "Unable to obtain auth token.") }
            token = value
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: "Unable to obtain auth token.")
        }
        await oauth.store(token, for: key)
        return token
    }
}

/// OAuth tokens per study and version of its settings, kept for an hour as in the original.
package actor OAuthTokenCache {
    package struct Key: Hashable, Sendable {
        package var studyKey: String
        package var settingsVersion: Date
    }

    package static let lifetime: Duration = .seconds(3600)

    package init() {}

    private var tokens: [Key: (token: String, until: ContinuousClock.Instant)] = [:]

    package func token(for key: Key) -> String? {
        guard let entry = tokens[key], entry.until > .now else { return nil }
        return entry.token
    }

    package func store(_ token: String, for key: Key) {
        tokens = tokens.filter { $0.key.studyKey != key.studyKey }
        tokens[key] = (token, .now + Self.lifetime)
    }
}
