import AsyncHTTPClient
import Foundation
import Logging
import NIOSSL
import ServiceKit
import StudyModels
import Synchronization

/// Sends the queued pushes, as a work queue: iOS devices through APNs, Android devices through
/// FCM, each with the app's credentials. A temporary failure is retried with backoff (2 s
/// doubling to 15 minutes, `maxAttempts`); a token the provider calls unregistered is removed
/// from its session; an app without credentials for the platform gives the row up with that
/// reason. Replicas share the queue through `SKIP LOCKED`.
package final class PushWorker: WorkQueue {
    /// Writers notify this channel in the transaction that queues pushes.
    package static let channel = "studystack_queue_push"

    /// Where the providers are, and extra CAs to trust for them.
    package struct Endpoints: Sendable {
        package var apnsProductionURL: String
        package var apnsSandboxURL: String
        package var fcmURL: String
        package var trustRootsFile: String?

        package init(apnsProductionURL: String, apnsSandboxURL: String, fcmURL: String, trustRootsFile: String?) {
            self.apnsProductionURL = apnsProductionURL
            self.apnsSandboxURL = apnsSandboxURL
            self.fcmURL = fcmURL
            self.trustRootsFile = trustRootsFile
        }
    }

    package enum Delivered: Sendable {
        case delivered(providerId: String)
        case unregistered(reason: String)
    }

    package let outbox: PushOutbox
    package let credentials: PushCredentialStore
    package let apns: APNsSender
    package let fcm: FCMSender
    package let maxAttempts: Int
    package let metrics: ServiceMetrics
    package let logger: Logger
    /// Credentials are read once per app and platform in a round.
    private let loaded = Mutex<[String: Result<PushCredentials?, any Error>]>([:])

    package init(
        outbox: PushOutbox, credentials: PushCredentialStore, endpoints: Endpoints, httpClient: HTTPClient, maxAttempts: Int,
        metrics: ServiceMetrics, logger: Logger
    ) {
        self.outbox = outbox
        self.credentials = credentials
        apns = APNsSender(httpClient: httpClient, productionURL: endpoints.apnsProductionURL, sandboxURL: endpoints.apnsSandboxURL)
        fcm = FCMSender(httpClient: httpClient, baseURL: endpoints.fcmURL)
        self.maxAttempts = maxAttempts
        self.metrics = metrics
        self.logger = logger
    }

    /// HTTP/2 where the provider offers it (APNs requires it); the system's CA roots plus
    /// `trustRootsFile` when set.
    package static func makeHTTPClient(trustRootsFile: String?) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsFile { tls.additionalTrustRoots = [.file(trustRootsFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package let queueName = "push"
    package var policy: DrainPolicy { DrainPolicy(batchSize: 50, lease: .seconds(120), retry: RetryPolicy(maxAttempts: maxAttempts)) }

    package func claim(limit: Int, lease: Duration) async throws -> [PushOutbox.Queued] {
        loaded.withLock { $0.removeAll() }
        return try await outbox.claim(batch: limit, lease: lease)
    }

    package func attempts(of queued: PushOutbox.Queued) -> Int { queued.attempts }

    package func perform(_ queued: PushOutbox.Queued) async -> WorkResult<Delivered> {
        let appId = queued.notification.appId
        let platform: Platform = queued.deviceOS == "ios" ? .ios : .android
        let outcome: PushOutcome
        switch await credentials(appId: appId, platform: platform) {
        case .success(.apns(let upload, let key)?):
            outcome = await apns.send(Self.message(for: queued), to: queued.deviceToken, with: upload, key: key, logger: logger)
        case .success(.fcm(let account, let key)?):
            outcome = await fcm.send(Self.message(for: queued), to: queued.deviceToken, with: account, key: key, logger: logger)
        case .success(nil):
            outcome = .failed("no \(platform.rawValue) push credentials for app \(appId)")
        case .failure(let error):
            outcome = .retry("the \(platform.rawValue) push credentials of \(appId) could not be read: \(error)")
        }
        switch outcome {
        case .delivered(let providerId): return .done(.delivered(providerId: providerId))
        case .unregistered(let reason): return .done(.unregistered(reason: reason))
        case .retry(let reason): return .failed(String(reason.prefix(300)))
        case .failed(let reason): return .rejected(String(reason.prefix(300)))
        }
    }

    private func credentials(appId: String, platform: Platform) async -> Result<PushCredentials?, any Error> {
        let key = "\(appId)/\(platform.rawValue)"
        if let known = loaded.withLock({ $0[key] }) { return known }
        let result: Result<PushCredentials?, any Error>
        do {
            result = .success(try await credentials.credentials(appId: appId, platform: platform))
        } catch {
            result = .failure(error)
        }
        loaded.withLock { $0[key] = result }
        return result
    }

    package func complete(_ queued: PushOutbox.Queued, with delivered: Delivered) async throws {
        switch delivered {
        case .delivered(let providerId):
            try await outbox.markSent(id: queued.id, providerId: providerId)
        case .unregistered(let reason):
            try await outbox.removeUnregistered(queued, reason: reason)
            logger.info("push token removed", metadata: ["push_id": "\(queued.id)", "reason": "\(reason)"])
        }
    }

    package func outcome(of delivered: Delivered) -> String {
        switch delivered {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        }
    }

    package func fail(_ queued: PushOutbox.Queued, reason: String, retryAfter: Duration?) async throws {
        try await outbox.markFailed(id: queued.id, error: reason, retryAfter: retryAfter)
    }

    /// The notification in the device's language, with the keys the apps read.
    package static func message(for queued: PushOutbox.Queued) -> PushMessage {
        let notification = queued.notification
        var data = ["type": notification.type.rawValue, "subtype": notification.subtype]
        data["studyId"] = notification.studyId ?? ""
        if let activityId = notification.activityId { data["activityId"] = activityId }
        if let resourceId = notification.resourceId { data["resourceId"] = resourceId }
        data["notificationId"] = notification.notificationId
        return PushMessage(
            title: notification.title.text(for: queued.language), body: notification.message.text(for: queued.language),
            data: data, collapseId: "push-\(queued.id)")
    }
}
