import Foundation
import TestSupport

extension FakeAPNs {
    /// A fake APNs on this machine for `body`, with the registration settings (`make run`'s
    /// environment names) that send pushes to it and trust its certificate; stopped afterwards,
    /// whether `body` throws or not.
    static func forPlatform(_ body: (FakeAPNs, _ registrationSettings: [String: String]) async throws -> Void) async throws {
        let certificates = try TestCertificates.make()
        defer { try? FileManager.default.removeItem(at: certificates.caFile) }
        let apns = FakeAPNs(certificates: certificates)
        let url = "https://127.0.0.1:\(try await apns.start())"
        do {
            try await body(apns, ["PUSH_APNS_PRODUCTION_URL": url, "PUSH_APNS_SANDBOX_URL": url, "PUSH_TRUST_ROOTS_FILE": certificates.caFile.path])
        } catch {
            try? await apns.stop()
            throw error
        }
        try await apns.stop()
    }
}
