import AsyncHTTPClient
import ServiceLifecycle
import Synchronization

/// An HTTP client that request handlers share, made on first use and shut down when the process
/// stops (run it among the application's services). An application that is built but never
/// serves a request (the OpenAPI coverage test builds them) makes none.
public final class ManagedHTTPClient: Service, Sendable {
    private let make: @Sendable () -> HTTPClient
    private let state = Mutex<State>(.idle)

    private enum State {
        case idle
        case running(HTTPClient)
        case stopped
    }

    public init(make: @escaping @Sendable () -> HTTPClient) {
        self.make = make
    }

    /// The client; after the process began to stop, an error.
    public func client() throws -> HTTPClient {
        try state.withLock { state in
            switch state {
            case .running(let client): return client
            case .idle:
                let client = make()
                state = .running(client)
                return client
            case .stopped: throw HTTPClientError.alreadyShutdown
            }
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        let client = state.withLock { state -> HTTPClient? in
            defer { state = .stopped }
            if case .running(let client) = state { return client }
            return nil
        }
        try await client?.shutdown()
    }
}
