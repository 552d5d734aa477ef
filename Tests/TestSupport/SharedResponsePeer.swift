import AsyncHTTPClient
import Foundation
import Logging
import ResponseService
import ServiceKit
import Synchronization

/// A real response service, one per test process, for the study-metadata instances of tests
/// that publish studies without running a response service of their own: publishing asks the
/// response service whether the study's answers can be stored (its storage rehearsal, always
/// rolled back), and refuses when nothing answers. It has its own database, kept for the
/// process (the test run's cluster is discarded with it); the study events those instances
/// send it are stored there and read by no test.
public enum SharedResponsePeer {
    private static let started = Mutex<Task<String, any Error>?>(nil)

    /// Its address (`http://127.0.0.1:<port>`), starting it on first use.
    public static func url() async throws -> String {
        let task = started.withLock { task -> Task<String, any Error> in
            if let task { return task }
            let starting = Task { try await start() }
            task = starting
            return starting
        }
        return try await task.value
    }

    /// Overrides that point a study-metadata configuration at it.
    public static func overrides() async throws -> [String: String] {
        ["response.url": try await url()]
    }

    private static func start() async throws -> String {
        let name = "test_shared_response_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        _ = try await TestDatabase.withAdminClient { client, logger in
            try await client.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        let port = try SMTPTestServer.freePort()
        var logger = Logger(label: "shared-response")
        logger.logLevel = .warning
        let app = try ResponseService.buildApplication(
            reader: TestConfiguration.reader(
                for: .response, databaseURL: try TestDatabase.url(for: name), overrides: ["http.port": "\(port)"]),
            logger: logger)
        Task.detached { try? await app.runService() }
        let address = "http://127.0.0.1:\(port)"
        _ = try await eventually("the shared response service answering /readyz", within: .seconds(60), poll: .milliseconds(100)) {
            let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: address + "/readyz"), timeout: .seconds(2))
            return response?.status.code ?? 0
        } until: { $0 == 200 }
        return address
    }
}
