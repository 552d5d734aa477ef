import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServiceKit
import ServiceKitHTTP
import Synchronization
import Testing

/// A service whose migrations are not applied yet serves nothing but `/healthz`, `/readyz` and
/// `/metrics`: every other request, from a load balancer or a peer that reached it early, is told
/// to come back (503, `Retry-After`) rather than run against a schema behind the code. Once
/// started, the same requests are served. (`buildServiceApplication` passes the migrations'
/// `StartupState` as `isStarted`.)
@Suite struct StartupGateTests {
    @Test func aServiceStillStartingAnswersComeBackToAllButItsProbes() async throws {
        let started = Mutex(false)
        let shell = HTTPShell(
            name: "gate-test", metrics: ServiceMetrics(), maxBodySize: 1 << 20, errorFormat: { _ in .admin },
            readiness: { ReadinessReport(ready: started.withLock { $0 }, service: "gate-test") },
            isStarted: { started.withLock { $0 } })
        shell.router.get("/admin/v1/anything") { _, _ in "served" }
        shell.router.get("/internal/v1/submissions") { _, _ in "served" }
        let app = Application(router: shell.router)
        try await app.test(.router) { client in
            for path in ["/admin/v1/anything", "/internal/v1/submissions", "/nowhere"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .serviceUnavailable, "\(path)")
                    #expect(response.headers[HTTPField.Name("Retry-After")!] == "1", "\(path)")
                    #expect(String(buffer: response.body).contains("\"starting\""), "\(path): \(String(buffer: response.body))")
                }
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .serviceUnavailable) }

            started.withLock { $0 = true }
            for path in ["/admin/v1/anything", "/internal/v1/submissions"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(String(buffer: response.body) == "served")
                }
            }
            try await client.execute(uri: "/nowhere", method: .get) { #expect($0.status == .notFound) }
        }
    }
}
