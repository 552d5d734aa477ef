import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// After a consent change published with re-consent: who owes a signature (the participants list,
/// its filter, a participant's page), the reminders a study admin sends them (outside quiet hours,
/// decided once each, pushed through the push queue), and the consent history export.
@Suite(.needsCluster) struct ConsentReminderTests {
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// `HH:mm` of New York's clock `offset` seconds from now.
    static func clock(_ offset: TimeInterval) -> String {
        let seconds = WallClock(Date().addingTimeInterval(offset), in: newYork)!.seconds
        return String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
    }

    /// A call to study-metadata's admin API as the super-admin.
    static func metadata(_ team: StudyMetadataFixture.Team, _ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> Int {
        var request = HTTPClientRequest(url: team.url + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(team.root)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    static func sign(_ h: RegistrationHarness, _ user: (userId: String, auth: String, refresh: String), version: String) async throws {
        let body: [String: Any] = [
            "studyId": "SLEEPWELL", "eligibility": true, "sharing": "",
            "consent": ["version": version, "status": "completed", "pdf": Data("%PDF-1.4\n% \(version)\n%%EOF\n".utf8).base64EncodedString()],
        ]
        #expect(try await h.call("updateEligibilityConsentStatus", body: body, auth: user.auth, userId: user.userId).status == .ok)
    }

    static func list(_ h: RegistrationHarness, _ token: String, _ query: String = "") async throws -> ParticipantList {
        let reply = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants\(query)", token: token)
        try #require(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(ParticipantList.self, from: reply.body)
    }

    @Test func whoOwesASignatureIsListedRemindedOutsideQuietHoursAndTheHistoryExported() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let ann = try await h.signUp("ann@example.org")
            try await h.device(ann, os: "ios", token: String(repeating: "a1", count: 32))
            let bob = try await h.signUp("bob@example.org")
            try await h.device(bob, os: "android", token: "bob-fcm-token", remote: false)
            let cat = try await h.signUp("cat@example.org")
            try await h.device(cat, os: "ios", token: String(repeating: "c3", count: 32))
            let dan = try await h.signUp("dan@example.org")
            let eve = try await h.signUp("eve@example.org")
            try await h.device(eve, os: "android", token: "fcm-eve:" + String(repeating: "Ab9_", count: 10))
            for user in [ann, bob, cat, dan, eve] { try await h.join("SLEEPWELL", auth: user.auth, userId: user.userId) }
            for user in [ann, bob, cat, dan] { try await Self.sign(h, user, version: "1.0") }

            // Before any re-consent, any signature does: only Eve, who signed none, owes one.
            var all = try await Self.list(h, team.viewer)
            try #require(all.participants.count == 5)
            #expect(all.consentVersionsInForce == nil)
            #expect(all.participants.filter(\.owesConsent).count == 1)

            // The study launches and its consent changes; the team asks everyone to sign again.
            #expect(try await Self.metadata(team, .POST, "/admin/v1/studies/SLEEPWELL/launch") == 200)
            let changed = try ExampleStudy().document(studyId: "SLEEPWELL")
                .replacingOccurrences(of: "We collect your answers.", with: "We collect your answers and your location.")
            #expect(try await Self.metadata(team, .PUT, "/admin/v1/studies/SLEEPWELL/draft", body: changed) == 200)
            #expect(try await Self.metadata(team, .POST, "/admin/v1/studies/SLEEPWELL/publish-updates?reconsent=true") == 200)
            try await Self.sign(h, cat, version: "1.1")

            all = try await Self.list(h, team.viewer)
            try #require(all.participants.count == 5)
            #expect(all.consentVersionsInForce == ["1.1"])
            #expect(all.participants.filter(\.owesConsent).count == 4, "everyone but Cat, who signed 1.1")
            let owing = try await Self.list(h, team.viewer, "?consent=owed")
            try #require(owing.participants.count == 4)
            #expect(owing.participants.filter(\.owesConsent).count == 4)
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants?consent=maybe", token: team.viewer).status == .badRequest)

            // A viewer may not send reminders; a bad request is refused whole; nothing is added.
            let path = "/admin/v1/studies/SLEEPWELL/consent-reminders"
            #expect(try await h.admin(.post, path, token: team.viewer, body: "{}").status == .forbidden)
            for bad in [
                #"{"quietFrom": "21:00"}"#, #"{"quietFrom": "25:00", "quietUntil": "08:00"}"#, #"{"quietFrom": "08:00", "quietUntil": "08:00"}"#,
                #"{"message": "two\nlines"}"#, "{\"message\": \"\(String(repeating: "x", count: 241))\"}", "not json",
            ] {
                #expect(try await h.admin(.post, path, token: team.root, body: bad).status == .badRequest, "\(bad)")
            }
            #expect(try await h.count("SELECT count(*)::int FROM consent_reminders") == 0)

            // Asked for in quiet hours (New York's clock, the study's zone): each waits for their end.
            let quietUntil = Self.clock(2 * 3600)
            let asked = try await h.admin(
                .post, path, token: team.root,
                body: #"{"quietFrom": "\#(Self.clock(-3600))", "quietUntil": "\#(quietUntil)", "message": "Please sign the new consent."}"#)
            try #require(asked.status == .ok, "\(String(decoding: asked.body, as: UTF8.self))")
            let summary = try JSONDecoder.iso8601.decode(ConsentReminderSummary.self, from: asked.body)
            #expect(summary.requested == 4 && summary.owing == 4)
            let postponed = try await eventually("the reminders put off to the end of the quiet hours", within: .seconds(30)) {
                try await h.postgres.query("SELECT due_at FROM consent_reminders", logger: .init(label: "test"))
                    .collect().map { try $0.decode(Date.self) }
            } until: { $0.count == 4 && $0.allSatisfy { $0 > Date().addingTimeInterval(3_000) } }
            for at in postponed {
                let clock = WallClock(at, in: Self.newYork)!.seconds
                #expect(String(format: "%02d:%02d", clock / 3600, clock / 60 % 60) == quietUntil)
            }
            // Asking again while they wait adds none.
            let again = try JSONDecoder.iso8601.decode(
                ConsentReminderSummary.self, from: try await h.admin(.post, path, token: team.root, body: "{}").body)
            #expect(again.requested == 0 && again.waiting == 4)

            // Dan signs meanwhile; the quiet hours end.
            try await Self.sign(h, dan, version: "1.1")
            try await h.sql("UPDATE consent_reminders SET quiet_from = '00:00', quiet_until = '00:01', due_at = now() - interval '1 second'")
            let decided = try await eventually("the reminders decided", within: .seconds(30)) {
                try await h.postgres.query(
                    """
                    SELECT p.email, r.outcome, r.devices FROM consent_reminders r JOIN participants p ON p.user_id = r.user_id
                    WHERE r.decided_at IS NOT NULL ORDER BY p.email
                    """, logger: .init(label: "test")
                ).collect().map { try $0.decode((String, String, Int).self) }
            } until: { $0.count == 4 }
            try #require(decided.count == 4)
            #expect(decided[0] == ("ann@example.org", "queued", 1))
            #expect(decided[1] == ("bob@example.org", "opted_out", 0))
            #expect(decided[2] == ("dan@example.org", "signed", 0))
            #expect(decided[3] == ("eve@example.org", "queued", 1))
            let pushes = try await h.postgres.query(
                """
                SELECT c.message::text FROM push_outbox q JOIN consent_reminders c ON c.id = q.consent_reminder_id ORDER BY q.id
                """, logger: .init(label: "test")
            ).collect().map { try $0.decode(String.self) }
            try #require(pushes.count == 2)
            let sent = try JSONDecoder().decode(NotificationMessage.self, from: Data(pushes[0].utf8))
            #expect(sent.type == .study && sent.subtype == "Study" && sent.studyId == "SLEEPWELL")
            #expect(sent.title.text(for: nil) == "Sleep Well" && sent.message.text(for: nil) == "Please sign the new consent.")
            #expect(try await h.count("SELECT count(*)::int FROM audit_events WHERE action = 'consent.reminded'") == 4)
            #expect(try await h.count("SELECT count(*)::int FROM audit_events WHERE action = 'consent.reminders_requested'") == 2)
            let standing = try JSONDecoder.iso8601.decode(
                ConsentReminderSummary.self, from: try await h.admin(.get, path, token: team.viewer).body)
            #expect(standing.owing == 3 && standing.waiting == 0)
            #expect(standing.outcomes == ["queued": 2, "opted_out": 1, "signed": 1])
            #expect(standing.lastRequestedBy == "root@studystack.test")

            // The history: every record, a formula an app sent made harmless.
            try await h.sql(
                """
                INSERT INTO consent_records (user_id, app_id, study_id, version, status, sharing)
                VALUES (\(UUID(uuidString: eve.userId)!), 'DEMOAPP', 'SLEEPWELL', '=1+1', 'pending', '')
                """)
            let history = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/consent-history", token: team.viewer)
            #expect(history.status == .ok)
            let lines = CSV.parse(String(decoding: history.body, as: UTF8.self))
            try #require(lines.count == 8, "a header and seven records")
            #expect(lines[0] == ["participantId", "consentId", "version", "status", "sharing", "recordedAt", "leftAt", "pdfSHA256", "pdfBytes"])
            #expect(lines.dropFirst().map { $0[2] } == ["1.0", "1.0", "1.0", "1.0", "1.1", "1.1", "'=1+1"])
            #expect(lines.dropFirst().allSatisfy { UUID(uuidString: $0[0]) != nil })
            #expect(try await h.count("SELECT count(*)::int FROM audit_events WHERE action = 'consent.history_exported'") == 1)
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/consent-history", token: team.stranger).status == .forbidden)
        }
    }
}
