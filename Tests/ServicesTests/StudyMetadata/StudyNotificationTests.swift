import Foundation
import InternalContracts
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// What study-metadata tells the other services: study events for the response service and
/// notifications for the registration service, both through the outbox, and the notifications
/// the apps list.
@Suite(.needsCluster) struct StudyNotificationTests {
    let fixture = NotificationFixture()

    let helper = MetadataAdmin()
    let api = WCPApp()

    func queued(_ postgres: PostgresClient, peer: String) async throws -> [NotificationFixture.Queued] {
        let rows = try await postgres.query(
            "SELECT peer, path, convert_from(body, 'UTF8') FROM internal_outbox WHERE peer = \(peer) ORDER BY id",
            logger: Logger(label: "test"))
        var found: [NotificationFixture.Queued] = []
        for try await (peer, path, body) in rows.decode((String, String, String).self) {
            found.append(NotificationFixture.Queued(peer: peer, path: path, body: body))
        }
        return found
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    func events(_ postgres: PostgresClient) async throws -> [StudyEvent] {
        try await queued(postgres, peer: "response").map {
            #expect($0.path == "/internal/v1/study-events")
            return try Self.decoder().decode(StudyEvent.self, from: Data($0.body.utf8))
        }
    }

    /// Every notification handed to the registration service so far.
    func pushed(_ postgres: PostgresClient) async throws -> [NotificationMessage] {
        // App settings go to the registration service too; only notification batches count here.
        try await queued(postgres, peer: "registration").filter { $0.path == InternalCalls.notifications.template }.flatMap {
            try Self.decoder().decode(NotificationBatch.self, from: Data($0.body.utf8)).notifications
        }
    }

    func appNotifications(
        _ client: some TestClientProtocol, _ credential: String, language: String? = nil, skip: Int = 0
    ) async throws -> [[String: Any]] {
        let (head, body) = try await api.get(
            client, "/StudyMetaData/notifications?skip=\(skip)", WCPApp.headers(credential, language: language))
        #expect(head.status == .ok)
        #expect(body["message"] as? String == "SUCCESS")
        return body["notifications"] as? [[String: Any]] ?? []
    }

    @Test func everyLifecycleActionQueuesAStudyEventForTheResponseService() async throws {
        try await fixture.withStudy { client, root, _, _, postgres in
            #expect(try await events(postgres).isEmpty)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish", token: root).0 == .ok)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            // A refused action queues nothing.
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/resume", token: root).0 == .conflict)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root).0 == .ok)

            let events = try await events(postgres)
            #expect(events.map(\.action) == ["publish", "launch", "pause"])
            #expect(events.map(\.status) == [.upcoming, .active, .paused])
            let launched = events[1]
            #expect(launched.studyId == "SLEEPWELL")
            #expect(launched.appId == "DEMOAPP")
            #expect(launched.orgId == "DEMOORG")
            #expect(launched.version == 1)
            #expect(launched.label == "1.0")
            #expect(launched.consentVersion == 1)
            #expect(launched.activities.map(\.activityId) == [
                "daily", "weekly", "baseline", "followUp", "monthlyCheck", "clinicVisits", "postSurgery", "anytimeLog",
                "kicks",
            ])
            #expect(launched.activities.allSatisfy { $0.version == 1 && $0.label == "1.0" })
            #expect(launched.activities.contains { $0.type == "task" })
            #expect(launched.participantProperties.map(\.key) == ["surgeryDate"])
        }
    }

    @Test func aStudyAdminsPublishAndLaunchAnnounceNothingToTheWholeApp() async throws {
        try await helper.withService { client, root, url in
            #expect(try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
            // An admin with no role anywhere starts a study (and so becomes its study admin) whose
            // name is the message they want every user of the gateway app to get.
            let (_, outsider) = try await helper.makeAdmin(client, root: root, email: "outsider@studystack.test")
            var document = try JSONSerialization.jsonObject(
                with: Data(contentsOf: MetadataAdmin.exampleURL)) as! [String: Any]
            document["studyId"] = "SPAM"
            document["name"] = ["en": "Claim your prize at evil.example"]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            let (created, createdBody) = try await helper.send(client, .put, "/admin/v1/studies/SPAM/draft", token: outsider, body: body)
            #expect(created == .created, "\(String(buffer: createdBody))")
            for action in ["publish", "launch"] {
                let (status, reply) = try await helper.send(client, .post, "/admin/v1/studies/SPAM/\(action)", token: outsider)
                #expect(status == .ok, "\(action): \(String(buffer: reply))")
            }
            try await TestDatabase.withClient(url: url) { postgres, _ in
                try await fixture.dispatch(postgres)
                let sent = try await pushed(postgres)
                #expect(!sent.contains { $0.type == .gateway }, "\(sent.map(\.message))")
                #expect(!sent.contains { $0.message.text(for: "en").contains("evil.example") && $0.type != .study })
                let rows = try await postgres.query(
                    "SELECT count(*)::int FROM notifications WHERE type = 'Gateway'", logger: Logger(label: "test"))
                #expect(try await rows.decode(Int.self).single() == 0)
            }
        }
    }

    @Test func notificationsGoOutWhenDueAndAreListedForTheApps() async throws {
        try await fixture.withStudy { client, root, ios, example, postgres in
            // Publishing as upcoming announces the study to the gateway app's users; the study's own
            // notifications wait for the launch.
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish", token: root)
            try await fixture.dispatch(postgres)
            var sent = try await pushed(postgres)
            #expect(sent.map(\.subtype) == ["Study"])
            #expect(sent.first?.type == .gateway)
            #expect(sent.first?.message.text(for: "en") == "A new study is coming soon: Sleep Well.")

            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root)
            try await fixture.dispatch(postgres)
            sent = try await pushed(postgres)
            // The immediate "welcome" goes out with the launch message; "midpoint" (2027) waits, and
            // the anchor-relative reminder is per participant (the registration service's job).
            #expect(Set(sent.map(\.notificationId).filter { !$0.hasPrefix("publish-") && !$0.hasPrefix("launch-") })
                == ["welcome"])
            let welcome = try #require(sent.first { $0.notificationId == "welcome" })
            #expect(welcome.type == .study)
            #expect(welcome.studyId == "SLEEPWELL")
            #expect(welcome.orgId == "DEMOORG")
            #expect(Set(sent.map(\.id)).count == sent.count)

            let listed = try await appNotifications(client, ios)
            #expect(listed.count == 3)
            let first = try #require(listed.first { $0["notificationId"] as? String == "welcome" })
            #expect(first["type"] as? String == "Study")
            #expect(first["subtype"] as? String == "Announcement")
            #expect(first["audience"] as? String == "All")
            #expect(first["title"] as? String == "Sleep Well")
            #expect(first["message"] as? String == "Welcome to Sleep Well!")
            #expect(first["studyId"] as? String == "SLEEPWELL")
            #expect(first["activityId"] as? String == "")
            let date = try #require(first["date"] as? String)
            #expect(date.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[45]00$"#, options: .regularExpression) != nil)
            let launch = try #require(listed.first { ($0["notificationId"] as? String)?.hasPrefix("launch-") == true })
            #expect(launch["type"] as? String == "Gateway")
            #expect(launch["message"] as? String == "A new study is open: Sleep Well.")
            let spanish = try await appNotifications(client, ios, language: "es")
            #expect(spanish.contains { $0["message"] as? String == "Un nuevo estudio está abierto: Duerma Bien." })
            #expect(try await appNotifications(client, ios, skip: 3).isEmpty)
            let (bad, _) = try await api.get(client, "/StudyMetaData/notifications?skip=-1", WCPApp.headers(ios))
            #expect(bad.status == .badRequest)

            // Paused: participants hear of it at once, but a new study notification waits.
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root)
            let withNews = example.replacingOccurrences(
                of: #""notifications": ["#,
                with: #""notifications": [{"notificationId": "news", "subtype": "Announcement", "text": "News", "timing": "immediate"},"#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: withNews).0 == .ok)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            try await fixture.dispatch(postgres)
            sent = try await pushed(postgres)
            #expect(sent.contains { $0.notificationId.hasPrefix("pause-") && $0.subtype == "studyEvent" })
            #expect(!sent.contains { $0.notificationId == "news" })

            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/resume", token: root)
            try await fixture.dispatch(postgres)
            sent = try await pushed(postgres)
            #expect(sent.filter { $0.notificationId == "news" }.count == 1)
            #expect(sent.contains { $0.notificationId.hasPrefix("resume-") })
            // Sent is sent: publishing again does not send "welcome" twice.
            try await fixture.dispatch(postgres)
            #expect(try await pushed(postgres).filter { $0.notificationId == "welcome" }.count == 1)

            // Closing the study drops what has not gone out.
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/deactivate", token: root)
            let (_, listing) = try await helper.send(client, .get, "/admin/v1/apps/DEMOAPP/notifications", token: root)
            let records = try Self.decoder().decode([String: [NotificationStore.Record]].self, from: Data(buffer: listing))["notifications"] ?? []
            #expect(!records.contains { $0.notificationId == "midpoint" })
            #expect(records.contains { $0.notificationId.hasPrefix("deactivate-") && $0.origin == .lifecycle })
        }
    }

    /// A notification dated in the past was accepted and then sent to everyone at launch, a day
    /// late. Now the save says so, and the launch does not send it.
    @Test func aNotificationWhoseTimeHasPassedIsWarnedOfAndNeverSent() async throws {
        try await fixture.withStudy { client, root, _, example, postgres in
            let withStale = example.replacingOccurrences(
                of: #""notifications": ["#,
                with: #""notifications": [{"notificationId": "stale", "subtype": "Announcement", "text": "Yesterday's news", "timing": "scheduled", "at": "2020-01-01T09:00"},"#)
            let (status, body) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: withStale)
            #expect(status == .ok)
            let saved = try body.decodeJSON(DraftSaved.self)
            let warning = try #require(saved.warnings.first { $0.pointer == "/notifications/0/at" })
            #expect(warning.message == "2020-01-01T09:00 has passed, so this notification will not be sent; give it a time to come, or remove it")

            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            try await fixture.dispatch(postgres)
            let sent = try await pushed(postgres)
            #expect(sent.contains { $0.notificationId == "welcome" }, "the immediate one still goes")
            #expect(!sent.contains { $0.notificationId == "stale" })
            let rows = try await postgres.query(
                "SELECT count(*)::int FROM notifications WHERE notification_id = 'stale'", logger: Logger(label: "test"))
            #expect(try await rows.decode(Int.self).single() == 0)
        }
    }

    @Test func adminsAnnounceToEveryUserOfAnApp() async throws {
        try await fixture.withStudy { client, root, ios, _, postgres in
            let invalid = #"{"notificationId": "no spaces", "text": {"es": "Hola"}, "at": "tomorrow"}"#
            let (status, body) = try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: root, body: invalid)
            #expect(status == .unprocessableContent)
            let pointers = try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.map(\.pointer)
            #expect(pointers == ["/notificationId", "/text", "/at"])

            // PostgreSQL stores no NUL character: refused as the client's input, nothing stored
            // (found by fuzzing: it was a 500).
            let nul = #"{"notificationId": "nul", "text": "a\u0000b"}"#
            let (nulStatus, nulBody) = try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: root, body: nul)
            #expect(nulStatus == .badRequest)
            #expect(try nulBody.decodeJSON(AdminErrorBody.self).error.message == "Text cannot contain the NUL character (\\u0000).")

            let (_, editor) = try await helper.makeAdmin(client, root: root, email: "editor@studystack.test")
            let announcement = #"{"notificationId": "maintenance", "title": "Demo", "text": {"en": "Down tonight", "es": "Cerrado esta noche"}}"#
            #expect(try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: editor, body: announcement).0 == .forbidden)
            #expect(try await helper.send(client, .post, "/admin/v1/apps/NOAPP/notifications", token: root, body: announcement).0 == .notFound)
            #expect(try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: root, body: announcement).0 == .created)
            #expect(try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: root, body: announcement).0 == .conflict)
            let later = #"{"notificationId": "later", "text": "Next year", "at": "2099-01-01T09:00:00+01:00"}"#
            #expect(try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/notifications", token: root, body: later).0 == .created)

            try await fixture.dispatch(postgres)
            let pushed = try await pushed(postgres)
            #expect(pushed.map(\.notificationId) == ["maintenance"])
            #expect(pushed.first?.studyId == nil)
            #expect(pushed.first?.type == .gateway)
            let listed = try await appNotifications(client, ios, language: "es")
            #expect(listed.count == 1)
            #expect(listed.first?["subtype"] as? String == "Announcement")
            #expect(listed.first?["message"] as? String == "Cerrado esta noche")
            #expect(listed.first?["studyId"] as? String == "")
            #expect((listed.first?["date"] as? String)?.hasSuffix("+0000") == true)

            // Operators see the queued call to the registration service, undelivered (nothing listens).
            let (outboxStatus, outbox) = try await helper.send(client, .get, "/admin/v1/outbox?undelivered=true", token: root)
            #expect(outboxStatus == .ok)
            #expect(String(buffer: outbox).contains(#""path":"\/internal\/v1\/notifications""#)
                || String(buffer: outbox).contains(#""path":"/internal/v1/notifications""#))
            #expect(try await helper.send(client, .get, "/admin/v1/outbox", token: editor).0 == .forbidden)
            let (_, audit) = try await helper.send(client, .get, "/admin/v1/audit", token: root)
            #expect(String(buffer: audit).contains("notification.announced"))
            #expect(String(buffer: audit).contains("notification.sent"))
        }
    }

    @Test func aStudyAdminSendsAMessageToAnActiveStudysParticipantsNow() async throws {
        try await fixture.withStudy { client, root, _, _, postgres in
            let path = "/admin/v1/studies/SLEEPWELL/notifications"
            let message = #"{"notificationId": "reminder", "text": {"en": "Please open the app today.", "es": "Abra la aplicación hoy."}}"#
            // A draft has no participants to message: refused, and nothing is queued.
            let (draftStatus, draftBody) = try await helper.send(client, .post, path, token: root, body: message)
            #expect(draftStatus == .conflict)
            #expect(String(buffer: draftBody).contains("a message is sent only to the participants of an active study"))
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            try await fixture.dispatch(postgres)
            let planned = try await pushed(postgres).count

            // Every problem of a bad message at once; nothing stored.
            let invalid = #"{"notificationId": "no spaces", "text": {"es": "Hola"}, "title": {"en": "\#(String(repeating: "t", count: 101))"}}"#
            let (status, body) = try await helper.send(client, .post, path, token: root, body: invalid)
            #expect(status == .unprocessableContent)
            #expect(try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.map(\.pointer) == ["/notificationId", "/text", "/title/en"])
            let long = "{\"text\": \"\(String(repeating: "a", count: StudyMessages.maximumText + 1))\"}"
            let (longStatus, longBody) = try await helper.send(client, .post, path, token: root, body: long)
            #expect(longStatus == .unprocessableContent)
            #expect(try longBody.decodeJSON(MetadataAdmin.Problems.self).error.problems?.map(\.pointer) == ["/text/en"])

            // Only the study's admins send; an unknown study is not found.
            let (_, other) = try await helper.makeAdmin(client, root: root, email: "other@studystack.test")
            #expect(try await helper.send(client, .post, path, token: other, body: message).0 == .forbidden)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/NOSTUDY/notifications", token: root, body: message).0 == .notFound)
            #expect(try await helper.send(client, .post, path, token: root, body: message).0 == .created)
            #expect(try await helper.send(client, .post, path, token: root, body: message).0 == .conflict, "a repeated id")

            // Handed to the registration service at once, for the study's participants.
            try await fixture.dispatch(postgres)
            let sent = try await pushed(postgres)
            #expect(sent.count == planned + 1)
            let reminder = try #require(sent.last)
            #expect(reminder.notificationId == "reminder" && reminder.studyId == "SLEEPWELL" && reminder.type == .study)
            #expect(reminder.message.text(for: "es") == "Abra la aplicación hoy.")
            // The study's list has it with the planned ones, by when each is due, latest first (the
            // midpoint notification, due in 2027, is listed unsent); others' studies are not theirs.
            let (listStatus, list) = try await helper.send(client, .get, path, token: root)
            #expect(listStatus == .ok)
            let listed = try #require(try list.decodeJSON([String: [JSONObject]].self)["notifications"])
            #expect(listed.count == planned + 2)
            #expect(listed.map { $0["notificationId"]?.string ?? "" } == ["midpoint", "reminder"] + sent.dropLast().reversed().map(\.notificationId))
            #expect(listed[1]["origin"] == .string("message") && listed[0]["sentAt"] == nil)
            #expect(try await helper.send(client, .get, path, token: other).0 == .forbidden)
            let (_, audit) = try await helper.send(client, .get, "/admin/v1/audit", token: root)
            #expect(String(buffer: audit).contains("study.message_sent"))

            // Paused: refused again.
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root).0 == .ok)
            let later = #"{"text": "Later"}"#
            #expect(try await helper.send(client, .post, path, token: root, body: later).0 == .conflict)
        }
    }
}
