import Logging
import ServiceLifecycle

/// Runs `work` every `interval` until the process shuts down. A failing run is logged and the
/// next one happens on schedule. The work itself must be safe on several replicas at once.
public struct PeriodicJob: Service {
    let name: String
    let interval: Duration
    let logger: Logger
    let work: @Sendable () async throws -> Void

    public init(name: String, every interval: Duration, logger: Logger, work: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.work = work
    }

    public func run() async throws {
        let (name, interval, logger, work) = (self.name, self.interval, self.logger, self.work)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                do {
                    try await work()
                } catch {
                    logger.warning("periodic job failed", metadata: ["job": "\(name)", "error": "\(String(reflecting: error))"])
                }
            }
        }
    }
}
