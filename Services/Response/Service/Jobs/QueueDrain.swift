import Logging
import ServiceLifecycle

/// The loop both response workers run: once the service is ready, take work until there is none
/// (`next` returns false), then wait `pollInterval`; an error pauses the round, not the worker,
/// and graceful shutdown ends it.
enum QueueDrain {
    static func run(
        _ name: String, pollInterval: Duration, isReady: @escaping @Sendable () -> Bool, logger: Logger,
        next: @escaping @Sendable () async throws -> Bool
    ) async {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if isReady() {
                    do {
                        while try await next() {}
                    } catch is CancellationError {
                        return
                    } catch {
                        logger.warning("\(name) paused", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                try await Task.sleep(for: pollInterval)
            }
        }
    }
}
