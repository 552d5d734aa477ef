import Crypto
import Foundation
import InternalContracts
import HTTPTypes
import Logging
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Push delivery against local stand-ins for APNs (HTTP/2 over TLS) and FCM (OAuth token
/// exchange and HTTP v1), which check the JWTs, headers and payloads as the real ones do.
@Suite(.serialized) struct RegistrationPushDeliveryTests {
    static let iosToken = String(repeating: "ab", count: 32)
    static let androidToken = "cF3k9AbCdEf:APA91b" + String(repeating: "Xy7_", count: 34)

    /// The registration service pointed at the fakes, with both platforms' credentials uploaded.
    func withPush(
        uploadCredentials: Bool = true,
        _ body: @escaping @Sendable (RegistrationHarness, FakeAPNs, FakeFCM) async throws -> Void
    ) async throws {
        let certificates = try TestCertificates.make()
        defer { try? FileManager.default.removeItem(at: certificates.caFile) }
        let apns = FakeAPNs(certificates: certificates)
        let apnsPort = try await apns.start()
        let fcm = try await FakeFCM.start(certificates: certificates)
        let overrides = [
            "push.apnsProductionURL": "https://127.0.0.1:\(apnsPort)",
            "push.apnsSandboxURL": "https://127.0.0.1:\(apnsPort)",
            "push.fcmURL": fcm.server.url,
            "push.trustRootsFile": certificates.caFile.path,
        ]
        do {
            try await RegistrationHarness.run(overrides: overrides) { h in
                if uploadCredentials {
                    #expect(try await upload(h, .ios, JSONEncoder().encode(apns.credentials)).0 == .ok)
                    #expect(try await upload(h, .android, JSONEncoder().encode(fcm.account)).0 == .ok)
                }
                try await body(h, apns, fcm)
            }
        } catch {
            try? await apns.stop()
            try? await fcm.server.stop()
            throw error
        }
        try await apns.stop()
        try await fcm.server.stop()
    }

    /// Uploads credentials as study-metadata relays them: sealed for the path, signed.
    func upload(_ h: RegistrationHarness, _ platform: Platform, _ json: Data, as caller: ServiceName = .studyMetadata,
                sealedFor path: String? = nil) async throws -> (HTTPResponse.Status, JSONObject) {
        let target = try InternalCalls.pushCredentials.path(["appId": "DEMOAPP", "platform": platform.rawValue])
        let keys = InternalKeys(
            ownName: caller, signingKey: SymmetricKey(data: Data(base64Encoded: TestConfiguration.keys[caller]!)!),
            callerKeys: [:])
        let sealed = try SealedBody.seal(json, to: .registration, path: path ?? target, keys: keys)
        return try await h.signed(.put, target, body: sealed, as: caller)
    }

    func notify(_ h: RegistrationHarness, id: Int64, studyId: String? = "S1") async throws {
        let message = NotificationMessage(
            id: id, notificationId: "n\(id)", appId: "DEMOAPP", orgId: "DEMOORG", studyId: studyId,
            type: studyId == nil ? .gateway : .study, subtype: "Activity",
            title: LocalizedText(translations: ["en": "New survey", "es": "Nueva encuesta"]),
            message: LocalizedText(translations: ["en": "Please answer today", "es": "Responda hoy"]),
            activityId: "daily", resourceId: nil, sentAt: Date())
        #expect(try await h.deliver(NotificationBatch(notifications: [message])).0 == .ok)
    }

    /// Waits until every push row is settled (sent or given up); returns (sent, gave up) counts.
    @discardableResult
    func settled(_ h: RegistrationHarness, expecting total: Int, timeout: Duration = .seconds(20)) async throws
        -> (sent: Int, gaveUp: Int)
    {
        // Each row's state, so a wait that runs out says where every push stands.
        let rows = try await eventually("\(total) push rows sent or given up", within: timeout) {
            var rows: [(os: String, attempts: Int, error: String?, sent: Bool, gaveUp: Bool)] = []
            for try await row in try await h.postgres.query(
                """
                SELECT device_os, attempts, last_error, sent_at IS NOT NULL, gave_up_at IS NOT NULL
                FROM push_outbox ORDER BY id
                """, logger: Logger(label: "test")
            ).decode((String, Int, String?, Bool, Bool).self) { rows.append(row) }
            return rows
        } until: { rows in rows.count == total && rows.allSatisfy { $0.sent || $0.gaveUp } }
        return (rows.filter(\.sent).count, rows.filter(\.gaveUp).count)
    }

    @Test(.needsCluster) func notificationsReachAPNsAndFCMWithValidProviderTokens() async throws {
        try await withPush { h, apns, fcm in
            let ios = try await h.signUp("ios@example.org")
            try await h.device(ios, os: "ios", token: Self.iosToken)
            #expect(try await h.call(
                "updateUserProfile", body: ["settings": ["locale": "es-MX"]], auth: ios.auth, userId: ios.userId).status == .ok)
            try await h.join(ios, status: "inProgress")
            let android = try await h.signUp("android@example.org")
            try await h.device(android, os: "android", token: Self.androidToken)
            try await h.join(android, status: "inProgress")

            try await notify(h, id: 1)
            #expect(try await settled(h, expecting: 2) == (2, 0))

            let pushed = try #require(apns.received.first)
            #expect(apns.received.count == 1)
            #expect(pushed.deviceToken == Self.iosToken)
            #expect(pushed.headers["apns-topic"] == "org.studystack.demo")
            #expect(pushed.headers["apns-push-type"] == "alert")
            #expect(pushed.headers["apns-priority"] == "10")
            // One collapse id per push, kept through retries: a push sent again after a worker
            // died before recording it shows once on the device.
            var pushIds: [Int64] = []
            for try await id in try await h.postgres.query("SELECT id FROM push_outbox WHERE device_os = 'ios'", logger: Logger(label: "test"))
                .decode(Int64.self) { pushIds.append(id) }
            #expect(pushIds.count == 1)
            #expect(pushed.headers["apns-collapse-id"] == "push-\(pushIds.first ?? 0)")
            // The participant's locale picks the text.
            #expect(pushed.payload["aps"]?["alert"]?["title"]?.text == "Nueva encuesta")
            #expect(pushed.payload["aps"]?["alert"]?["body"]?.text == "Responda hoy")
            #expect(pushed.payload["type"]?.text == "Study")
            #expect(pushed.payload["subtype"]?.text == "Activity")
            #expect(pushed.payload["studyId"]?.text == "S1")
            #expect(pushed.payload["activityId"]?.text == "daily")

            let message = try #require(fcm.received.first)
            #expect(fcm.received.count == 1)
            #expect(message["token"]?.text == Self.androidToken)
            let data = try #require(message["data"])
            #expect(data["title"]?.text == "New survey")
            #expect(data["message"]?.text == "Please answer today")
            #expect(data["type"]?.text == "Study")
            #expect(data["subtype"]?.text == "Activity")
            #expect(data["studyId"]?.text == "S1")
            #expect(fcm.exchanges == 1)
            #expect(apns.refused.isEmpty)
            #expect(fcm.refused.isEmpty)

            // The provider ids are kept; a second notification reuses the FCM access token.
            let ids = try await h.postgres.query(
                "SELECT device_os, provider_id FROM push_outbox ORDER BY device_os", logger: Logger(label: "test"))
            var providerIds: [String: String] = [:]
            for try await (os, id) in ids.decode((String, String?).self) { providerIds[os] = id }
            #expect(providerIds["android"] == "projects/studystack-demo/messages/1")
            #expect(UUID(uuidString: providerIds["ios"] ?? "") != nil)
            try await notify(h, id: 2, studyId: nil)
            #expect(try await settled(h, expecting: 4) == (4, 0))
            #expect(fcm.exchanges == 1)
        }
    }

    @Test(.needsCluster) func aTokenTheProviderCallsUnregisteredIsRemoved() async throws {
        try await withPush { h, apns, fcm in
            let ios = try await h.signUp("gone-ios@example.org")
            try await h.device(ios, os: "ios", token: Self.iosToken)
            let android = try await h.signUp("gone-android@example.org")
            try await h.device(android, os: "android", token: Self.androidToken)
            apns.unregister(Self.iosToken)
            fcm.unregister(Self.androidToken)

            try await notify(h, id: 1, studyId: nil)
            #expect(try await settled(h, expecting: 2) == (0, 2))
            let rows = try await h.postgres.query(
                "SELECT count(*)::int FROM participant_sessions WHERE device_token IS NOT NULL", logger: Logger(label: "test"))
            #expect((try await rows.decode(Int.self).single()) == 0)
            let errors = try await h.postgres.query(
                "SELECT last_error FROM push_outbox ORDER BY device_os", logger: Logger(label: "test"))
            var reasons: [String] = []
            for try await reason in errors.decode(String?.self) { reasons.append(reason ?? "") }
            #expect(reasons == ["FCM 404 UNREGISTERED", "APNs 410 Unregistered"])
            let audit = try await h.postgres.query(
                "SELECT count(*)::int FROM audit_events WHERE action = 'push.token_removed'", logger: Logger(label: "test"))
            #expect((try await audit.decode(Int.self).single()) == 2)

            // Nothing more goes to those devices.
            try await notify(h, id: 2, studyId: nil)
            #expect(try await settled(h, expecting: 2) == (0, 2))
        }
    }

    @Test(.needsCluster) func aPushWaitsForAProviderThatIsDownAndGoesOnceItIsBack() async throws {
        try await withPush { h, apns, _ in
            let ios = try await h.signUp("patient@example.org")
            try await h.device(ios, os: "ios", token: Self.iosToken)
            let port = try #require(apns.port)
            try await apns.stop()

            try await notify(h, id: 1, studyId: nil)
            // The first attempt fails and is scheduled again.
            let lastError = try await eventually("a failed first attempt, scheduled again", within: .seconds(15)) {
                var lastError: String?
                for try await error in try await h.postgres.query(
                    "SELECT last_error FROM push_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL",
                    logger: Logger(label: "test")
                ).decode(String?.self) { lastError = error }
                return lastError
            }
            #expect(lastError.hasPrefix("APNs unreachable"))
            #expect(apns.received.isEmpty)

            _ = try await apns.start(port: port)
            #expect(try await settled(h, expecting: 1, timeout: .seconds(30)) == (1, 0))
            #expect(apns.received.map(\.deviceToken) == [Self.iosToken])
        }
    }

    @Test(.needsCluster) func credentialsAreCheckedSealedAndNeverReturned() async throws {
        try await withPush(uploadCredentials: false) { h, apns, fcm in
            // Without credentials a push is given up with the reason.
            let ios = try await h.signUp("nocreds@example.org")
            try await h.device(ios, os: "ios", token: Self.iosToken)
            try await notify(h, id: 1, studyId: nil)
            #expect(try await settled(h, expecting: 1) == (0, 1))

            var bad = apns.credentials
            bad.teamId = "team"
            bad.privateKey = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"
            let (refused, problems) = try await upload(h, .ios, JSONEncoder().encode(bad))
            #expect(refused == .unprocessableContent)
            if case .array(let list)? = problems["error"]?["problems"] {
                #expect(list.compactMap { $0["pointer"]?.text } == ["/teamId", "/privateKey"])
            } else {
                Issue.record("no problems in \(problems)")
            }
            // Android credentials under the iOS path, a body sealed for another path, another caller.
            #expect(try await upload(h, .ios, JSONEncoder().encode(fcm.account)).0 == .unprocessableContent)
            let androidPath = try InternalCalls.pushCredentials.path(["appId": "DEMOAPP", "platform": Platform.android.rawValue])
            #expect(try await upload(h, .ios, JSONEncoder().encode(apns.credentials), sealedFor: androidPath).0 == .badRequest)
            #expect(try await upload(h, .ios, JSONEncoder().encode(apns.credentials), as: .response).0 == .forbidden)
            #expect(try await h.signed(.get, (try InternalCalls.pushCredentialList.path(["appId": "DEMOAPP"]))).1["credentials"] == .array([]))

            let (stored, summary) = try await upload(h, .ios, JSONEncoder().encode(apns.credentials))
            #expect(stored == .ok)
            #expect(summary["keyId"]?.text == "KEY1234567")
            #expect(summary["teamId"]?.text == "TEAM123456")
            #expect(summary["publicKeySHA256"]?.text?.count == 64)
            #expect(summary["privateKey"] == nil)
            let (listed, list) = try await h.signed(.get, (try InternalCalls.pushCredentialList.path(["appId": "DEMOAPP"])))
            #expect(listed == .ok)
            let rendered = String(describing: list)
            #expect(!rendered.contains("PRIVATE KEY"))
            let rows = try await h.postgres.query(
                "SELECT sealed, summary::text FROM push_credentials", logger: Logger(label: "test"))
            let credentialRows = try await rows.decode((ByteBuffer, String).self).collect()
            try #require(!credentialRows.isEmpty)
            for (sealed, summaryText) in credentialRows {
                #expect(!String(decoding: sealed.readableBytesView, as: UTF8.self).contains("PRIVATE KEY"))
                #expect(!summaryText.contains("PRIVATE KEY"))
            }
            let path = try InternalCalls.pushCredentials.path(["appId": "DEMOAPP", "platform": Platform.ios.rawValue])
            #expect(try await h.signed(.delete, path).0 == .noContent)
            #expect(try await h.signed(.delete, path).0 == .notFound)
            #expect(!h.logs.contains("PRIVATE KEY"))
        }
    }
}
