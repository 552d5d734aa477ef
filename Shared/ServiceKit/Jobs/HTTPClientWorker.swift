import AsyncHTTPClient
import ServiceLifecycle

/// A worker that needs an HTTP client of its own (push providers, forwarding targets): the client
/// is made when the worker starts and shut down when it ends, so an application that is built
/// but never run (the OpenAPI coverage test builds them) holds no client to leak.
public struct HTTPClientWorker: Service {
    let makeClient: @Sendable () -> HTTPClient
    let makeWorker: @Sendable (HTTPClient) -> any Service

    public init(
        client makeClient: @escaping @Sendable () -> HTTPClient,
        worker makeWorker: @escaping @Sendable (HTTPClient) -> any Service
    ) {
        self.makeClient = makeClient
        self.makeWorker = makeWorker
    }

    public func run() async throws {
        let client = makeClient()
        do {
            try await makeWorker(client).run()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
