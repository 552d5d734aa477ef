import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A pooled keep-alive connection that the server, or a proxy in front of it, closes just as a
/// request goes out on it fails with no reply at all: nginx closes idle connections when it
/// reloads or after its keepalive_timeout, a replica closes them when it shuts down. Browsers
/// send an idempotent request once more in that case; the services' and the console's clients
/// do the same, so a deploy or a proxy reload does not surface as an error page or a failed call.
public enum StaleConnection {
    /// Whether `error` is a connection that was closed under the request, rather than a peer that
    /// is down (refused), slow (timed out) or answered.
    public static func closedUnderRequest(_ error: any Error) -> Bool {
        if let error = error as? ChannelError {
            return error == .ioOnClosedChannel || error == .outputClosed || error == .alreadyClosed || error == .eof
        }
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// Runs `attempt`, and once more when `method` is safe to repeat (GET or HEAD) and the first
    /// attempt failed on a connection closed under it. Each attempt builds its own request, so a
    /// signed one gets a fresh nonce.
    public static func retrying<Value>(_ method: HTTPMethod, _ attempt: () async throws -> Value) async throws -> Value {
        do {
            return try await attempt()
        } catch where (method == .GET || method == .HEAD) && closedUnderRequest(error) {
            return try await attempt()
        }
    }
}
