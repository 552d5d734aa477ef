import AsyncHTTPClient
import Foundation
import Logging
import NIOSSL
import ServiceKit
import ServiceLifecycle
import StudyModels

/// Sends the queued pushes: iOS devices through APNs, Android devices through FCM, each with the
/// app's credentials. A temporary failure is retried with backoff (2 s doubling to 15 minutes,
/// 30 attempts); a token the provider calls unregistered is removed from its session; an app
/// without credentials for the platform gives the row up with that reason. Replicas share the
/// queue through `SKIP LOCKED`.
struct PushWorker: Service {
    /// Where the providers are, and extra CAs to trust for them.
    struct Endpoints: Sendable {
        var apnsProductionURL: String
        var apnsSandboxURL: String
        var fcmURL: String
        var trustRootsFile: String?
    }

    let outbox: PushOutbox
    let credentials: PushCredentialStore
    let endpoints: Endpoints
    let pollInterval: Duration
    let maxAttempts: Int
    let isReady: @Sendable () -> Bool
    let metrics: ServiceMetrics
    let logger: Logger

    /// The HTTP client lives as long as the worker runs (created here, shut down on the way out).
    func run() async throws {
        let httpClient = Self.makeHTTPClient(trustRootsFile: endpoints.trustRootsFile)
        let apns = APNsSender(
            httpClient: httpClient, productionURL: endpoints.apnsProductionURL, sandboxURL: endpoints.apnsSandboxURL)
        let fcm = FCMSender(httpClient: httpClient, baseURL: endpoints.fcmURL)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if isReady() {
                    do {
                        while try await sendDue(apns: apns, fcm: fcm) > 0 {}
                    } catch {
                        logger.warning("push delivery failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                try await Task.sleep(for: pollInterval)
            }
        }
        try await httpClient.shutdown()
    }

    /// HTTP/2 where the provider offers it (APNs requires it); the system's CA roots plus
    /// `trustRootsFile` when set.
    static func makeHTTPClient(trustRootsFile: String?) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsFile { tls.additionalTrustRoots = [.file(trustRootsFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Tries every due push once; returns how many were claimed.
    @discardableResult
    func sendDue(apns: APNsSender, fcm: FCMSender) async throws -> Int {
        let batch = try await outbox.claim(batch: 50, lease: .seconds(120))
        // Credentials are read once per app and platform in a batch.
        var loaded: [String: Result<PushCredentials?, any Error>] = [:]
        for queued in batch {
            let appId = queued.notification.appId
            let platform: Platform = queued.deviceOS == "ios" ? .ios : .android
            let cacheKey = "\(appId)/\(platform.rawValue)"
            if loaded[cacheKey] == nil {
                do {
                    loaded[cacheKey] = .success(try await credentials.credentials(appId: appId, platform: platform))
                } catch {
                    loaded[cacheKey] = .failure(error)
                }
            }
            let outcome: PushOutcome
            switch loaded[cacheKey]! {
            case .success(.apns(let upload, let key)?):
                outcome = await apns.send(
                    Self.message(for: queued), to: queued.deviceToken, with: upload, key: key, logger: logger)
            case .success(.fcm(let account, let key)?):
                outcome = await fcm.send(
                    Self.message(for: queued), to: queued.deviceToken, with: account, key: key, logger: logger)
            case .success(nil):
                outcome = .failed("no \(platform.rawValue) push credentials for app \(appId)")
            case .failure(let error):
                outcome = .retry("the \(platform.rawValue) push credentials of \(appId) could not be read: \(error)")
            }
            try await settle(queued, outcome)
        }
        return batch.count
    }

    private func settle(_ queued: PushOutbox.Queued, _ outcome: PushOutcome) async throws {
        metrics.countWorkerOutcome(
            worker: "push", event: "deliveries", outcome: outcome.label,
            help: "Push delivery attempts by device OS and outcome.", labels: [("os", queued.deviceOS)])
        switch outcome {
        case .delivered(let providerId):
            try await outbox.markSent(id: queued.id, providerId: providerId)
        case .unregistered(let reason):
            try await outbox.removeUnregistered(queued, reason: reason)
            logger.info("push token removed", metadata: ["push_id": "\(queued.id)", "reason": "\(reason)"])
        case .retry(let reason) where queued.attempts < maxAttempts:
            try await outbox.markFailed(
                id: queued.id, error: String(reason.prefix(300)),
                retryAfter: OutboxWorker.Policy(maxAttempts: maxAttempts).backoff(afterAttempts: queued.attempts))
            logger.warning("push will be retried", metadata: ["push_id": "\(queued.id)", "reason": "\(reason)"])
        case .retry(let reason), .failed(let reason):
            try await outbox.markFailed(id: queued.id, error: String(reason.prefix(300)), retryAfter: nil)
            logger.warning("push given up", metadata: ["push_id": "\(queued.id)", "reason": "\(reason)"])
        }
    }

    /// The notification in the device's language, with the keys the apps read.
    static func message(for queued: PushOutbox.Queued) -> PushMessage {
        let notification = queued.notification
        var data = ["type": notification.type.rawValue, "subtype": notification.subtype]
        data["studyId"] = notification.studyId ?? ""
        if let activityId = notification.activityId { data["activityId"] = activityId }
        if let resourceId = notification.resourceId { data["resourceId"] = resourceId }
        data["notificationId"] = notification.notificationId
        return PushMessage(
            title: notification.title.text(for: queued.language), body: notification.message.text(for: queued.language),
            data: data)
    }
}

extension PushOutcome {
    var label: String {
        switch self {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        case .retry: "retry"
        case .failed: "failed"
        }
    }
}
