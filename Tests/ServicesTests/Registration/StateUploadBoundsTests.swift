import Foundation
import Logging
import Testing
import TestSupport

/// Study and activity state are the participant's to write, but not without bound: a call carries
/// at most 500 items, and its ids, versions and dates are short text.
@Suite(.needsCluster) struct StateUploadBoundsTests {
    func rows(_ h: RegistrationHarness, _ table: String) async throws -> Int {
        var value = -1
        for try await count in try await h.postgres.query(
            .init(unsafeSQL: "SELECT count(*)::int FROM \(table)"), logger: Logger(label: "test")
        ).decode(Int.self) { value = count }
        return value
    }

    @Test func oversizedStateUploadsAreRefusedAndStoreNothing() async throws {
        try await RegistrationHarness.run { h in
            let user = try await h.signUp("bounds@example.org")
            let tooMany = (0..<501).map { ["studyId": "S\($0)", "bookmarked": true] as [String: Any] }
            let many = try await h.call("updateStudyState", body: ["studies": tooMany], auth: user.auth, userId: user.userId)
            #expect(many.status == .badRequest)
            #expect(many.statusMessage == "At most 500 items per call.")
            let longId = try await h.call(
                "updateStudyState",
                body: ["studies": [["studyId": "S1", "status": "inProgress", "participantId": String(repeating: "x", count: 100_000)]]],
                auth: user.auth, userId: user.userId)
            #expect(longId.status == .badRequest)
            #expect(try await rows(h, "participant_studies") == 0)

            let longRun = try await h.call(
                "updateActivityState",
                body: ["studyId": "S1", "activity": [["activityId": "a", "activityRunId": "1", "activityState": "completed",
                                                      "activityVersion": String(repeating: "9", count: 10_000)]]],
                auth: user.auth, userId: user.userId)
            #expect(longRun.status == .badRequest)
            #expect(try await rows(h, "participant_activities") == 0)
            // Within bounds, both are stored.
            #expect(try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "S1", "status": "inProgress", "participantId": "p"]]],
                auth: user.auth, userId: user.userId
            ).status == .ok)
            #expect(try await rows(h, "participant_studies") == 1)
        }
    }
}
