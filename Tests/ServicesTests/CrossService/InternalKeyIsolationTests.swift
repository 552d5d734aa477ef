import Foundation
import InternalContracts
import HTTPTypes
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// A service holds only what verifies its own callers: the key study-metadata signs its calls to
/// the response service with signs nothing registration accepts, so a compromised response
/// service cannot push to every participant as study-metadata.
@Suite struct InternalKeyIsolationTests {
    @Test(.needsCluster) func theKeyAReceiverHoldsForACallerIsRefusedByEveryOtherReceiver() async throws {
        try await RegistrationHarness.run { h in
            // What the response service holds for study-metadata (its INTERNAL_CALLER_KEYS entry).
            let heldByResponse = TestConfiguration.pairKey(.studyMetadata, to: .response)
            let batch = NotificationBatch(notifications: [])
            let body = Array(try JSONEncoder().encode(batch))
            var headers = TestApplication.signedHeaders(
                caller: .studyMetadata, to: .registration, key: heldByResponse, method: .post, path: InternalCalls.notifications.template,
                body: body)
            headers[.contentType] = "application/json"
            let forged = try await h.client.execute(
                uri: InternalCalls.notifications.template, method: .post, headers: headers, body: ByteBuffer(bytes: body)) { $0.status }
            #expect(forged == .unauthorized)
            // Signed with study-metadata's pair key for registration, the same call is accepted.
            #expect(try await h.deliver(batch).0 == .ok)
        }
    }

    @Test func pairKeysDifferPerReceiverAndMatchTheScriptsDerivation() throws {
        let caller = ServiceName.studyMetadata
        let keys = ServiceName.allCases.map { TestConfiguration.pairKey(caller, to: $0) }
        #expect(Set(keys).count == ServiceName.allCases.count)
        #expect(!keys.contains(TestConfiguration.keys[caller]!))
        // scripts/internal-keys.py, which make run and deploy/make-env.sh use, derives the same key.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/internal-keys.py")
        for receiver in ServiceName.allCases {
            let printed = try ExternalTool.run(
                "python3", [script.path, "pair", caller.rawValue, receiver.rawValue], input: Data(TestConfiguration.keys[caller]!.utf8))
            #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == TestConfiguration.pairKey(caller, to: receiver))
        }
    }
}
