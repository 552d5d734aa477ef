import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Notifications from study-metadata reach the right devices: the signed internal endpoint, the
/// audience rules of the original, once per notification.
@Suite(.needsCluster) struct RegistrationPushAudienceTests {
    static func notification(id: Int64, studyId: String?) -> NotificationMessage {
        NotificationMessage(
            id: id, notificationId: "n\(id)", appId: "DEMOAPP", orgId: "DEMOORG", studyId: studyId,
            type: studyId == nil ? .gateway : .study, subtype: "Announcement", title: "Title", message: "Hello",
            activityId: nil, resourceId: nil, sentAt: Date())
    }

    @Test func eachNotificationReachesItsAudienceOnce() async throws {
        try await RegistrationHarness.run { h in
            let ios = String(repeating: "a1", count: 32)
            let joined = try await h.signUp("joined@example.org")
            try await h.device(joined, os: "ios", token: ios)
            try await h.join(joined, status: "inProgress")
            let withdrawn = try await h.signUp("withdrawn@example.org")
            try await h.device(withdrawn, os: "android", token: "fcm:" + String(repeating: "w", count: 60))
            try await h.join(withdrawn, status: "inProgress")
            try await h.join(withdrawn, status: "Withdrawn")
            let browsing = try await h.signUp("browsing@example.org")
            try await h.device(browsing, os: "android", token: "fcm:" + String(repeating: "b", count: 60))
            let muted = try await h.signUp("muted@example.org")
            try await h.device(muted, os: "ios", token: String(repeating: "c3", count: 32), remote: false)
            try await h.join(muted, status: "inProgress")
            // Another app's participant, and a signed-out device, get nothing.
            let registered = try await h.call("register", body: ["emailId": "other@example.org", "password": "Passw0rd!"], appId: "OTHERAPP")
            _ = registered
            let gone = try await h.signUp("gone@example.org")
            try await h.device(gone, os: "ios", token: String(repeating: "d4", count: 32))
            _ = try await h.call("logout", method: .delete, body: ["reason": "user_action"], auth: gone.auth, userId: gone.userId)

            // Counted before a message is sent, by the same rules: joined and muted have joined
            // S1 (withdrawn left); only joined's device takes notifications.
            let counted = try await PushAudienceStore(client: h.postgres, audit: AuditLog(client: h.postgres, logger: .init(label: "t")), logger: .init(label: "t"))
                .audience(studyId: "S1")
            #expect(counted == StudyAudience(participants: 2, devices: 1))

            let batch = NotificationBatch(notifications: [
                Self.notification(id: 101, studyId: "S1"), Self.notification(id: 102, studyId: nil),
            ])
            let (status, reply) = try await h.deliver(batch)
            #expect(status == .ok)
            // S1: the joined participant only. App-wide: joined, withdrawn and browsing (muted is off).
            #expect(reply["devices"] == .number(4))
            let rows = try await h.postgres.query(
                "SELECT notification_id, device_token FROM push_outbox ORDER BY notification_id, device_token",
                logger: .init(label: "t"))
            var queued: [(Int64, String)] = []
            for try await row in rows.decode((Int64, String).self) { queued.append(row) }
            #expect(queued.map(\.0) == [101, 102, 102, 102])
            #expect(queued.first?.1 == ios)

            // Delivered again (the outbox is at least once): nothing more is queued.
            let (again, repeated) = try await h.deliver(batch)
            #expect(again == .ok)
            #expect(repeated["devices"] == .number(0))

            // Only study-metadata may send; unsigned or malformed calls are refused.
            #expect(try await h.deliver(batch, as: .response).0 == .forbidden)
            let unsigned = try await h.client.execute(
                uri: "/internal/v1/notifications", method: .post, body: ByteBuffer(string: "{}")) { $0.status }
            #expect(unsigned == .unauthorized)
            let garbage = Array("{\"notifications\": 7}".utf8)
            var headers = TestApplication.signedHeaders(
                caller: .studyMetadata, to: .registration, method: .post, path: "/internal/v1/notifications", body: garbage)
            headers[.contentType] = "application/json"
            let bad = try await h.client.execute(
                uri: "/internal/v1/notifications", method: .post, headers: headers, body: ByteBuffer(bytes: garbage)) { $0.status }
            #expect(bad == .badRequest)
        }
    }
}
