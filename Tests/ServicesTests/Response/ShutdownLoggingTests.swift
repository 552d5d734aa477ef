import Foundation
import Logging
import NIOCore
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// A shutdown cancels the calls in flight. That is not a failure of the service called, and an
/// operator who is paged for warnings must not see one per replica stopped.
@Suite(.needsCluster) struct ShutdownLoggingTests {
    @Test func aStudyResyncCancelledByShutdownLogsNoFailure() async throws {
        try await ResponseHarness.run { h in
            let silent = try SilentListener()
            defer { silent.close() }
            let logs = CapturedLogs()
            let logger = Logger(label: "resync") { _ in CapturingLogHandler(records: logs) }
            let keys = try InternalKeys(ownName: .response, signingKey: TestConfiguration.keys[.response]!, callerKeys: nil)
            let resync = StudyResync(
                catalog: StudyCatalog(client: h.postgres, audit: AuditLog(client: h.postgres, logger: logger), logger: logger),
                client: InternalClient(keys: keys, peers: [.studyMetadata: silent.url], timeout: .seconds(60)),
                isReady: { true }, logger: logger)
            let running = Task { try await resync.run() }
            // study-metadata has the request and has not answered when the replica is stopped.
            try await eventually("the resync's call at study-metadata", within: .seconds(10)) { silent.hasConnection }
                until: { $0 }
            running.cancel()
            try await running.value
            #expect(!logs.contains("study resync failed"))
        }
    }

    @Test func aDesignFetchCancelledByShutdownLogsNoWarningWhereAnUnreachablePeerDoes() async throws {
        try await ResponseHarness.run { h in
            let keys = try InternalKeys(ownName: .response, signingKey: TestConfiguration.keys[.response]!, callerKeys: nil)
            func designs(_ peer: URL, timeout: TimeAmount, _ logs: CapturedLogs) -> DesignSource {
                let logger = Logger(label: "designs") { _ in CapturingLogHandler(records: logs) }
                return DesignSource(
                    client: h.postgres, internalClient: InternalClient(keys: keys, peers: [.studyMetadata: peer], timeout: timeout),
                    tables: StudyTables(client: h.postgres, access: h.access, logger: logger), logger: logger)
            }
            // Cancelled while study-metadata has the request.
            let silent = try SilentListener()
            defer { silent.close() }
            let cancelledLogs = CapturedLogs()
            let cancelled = designs(silent.url, timeout: .seconds(60), cancelledLogs)
            let fetching = Task {
                try await cancelled.ensureApplied(studyKey: "SHUTDOWN", studyId: "SHUTDOWN", activityId: "daily", version: "1.0")
            }
            try await eventually("the design's call at study-metadata", within: .seconds(10)) { silent.hasConnection } until: { $0 }
            fetching.cancel()
            await #expect(throws: (any Error).self) { try await fetching.value }
            #expect(!cancelledLogs.contains("a design could not be fetched"))
            // Nothing listening, nothing cancelled: that is worth a warning.
            let unreachableLogs = CapturedLogs()
            let unreachable = designs(URL(string: "http://127.0.0.1:\(try SMTPTestServer.freePort())")!, timeout: .seconds(1), unreachableLogs)
            await #expect(throws: (any Error).self) {
                try await unreachable.ensureApplied(studyKey: "SHUTDOWN", studyId: "SHUTDOWN", activityId: "daily", version: "1.0")
            }
            #expect(unreachableLogs.contains("a design could not be fetched"))
        }
    }
}

/// A TCP port on 127.0.0.1 that accepts connections (the kernel completes them) and never
/// answers: a peer whose reply is still to come.
final class SilentListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = descriptor >= 0 && withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestServerError(description: "no listening socket: errno \(errno)") }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Whether a connection waits to be accepted.
    var hasConnection: Bool {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, 0) == 1
    }

    func close() { _ = Glibc.close(descriptor) }
}
