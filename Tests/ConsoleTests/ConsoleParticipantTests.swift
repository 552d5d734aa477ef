import Crypto
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Running the study in the console, over registration's admin API: the participants table and
/// one participant's page (consent history, the signed PDF passed on byte for byte, activities),
/// and the invitations page (a CSV refused whole with its bad line named, three people invited,
/// one revoked), as a study admin and as a viewer.
@Suite(.needsCluster) struct ConsoleParticipantTests {
    static let pdf = Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% signed by Pat\n%%EOF\n".utf8)

    /// Pat joined CONSOLE1 and signed consent 1.0 with a PDF (stored as the service stores it);
    /// Quinn joined without consenting. Returns Pat's participant id in the study.
    static func seed(_ registration: ConsoleFixture.Registration) async throws -> String {
        let logger = Logger(label: "seed")
        let storage = FileConsentStorage(
            directory: registration.consentDirectory, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!)
        let key = try await storage.store(pdf)
        var pat = ""
        for (name, consent) in [("pat", true), ("quinn", false)] {
            let userId = UUID()
            let email = "\(name)@participants.test"
            try await registration.postgres.query(
                """
                INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
                VALUES (\(userId), 'CONSOLEAPP', 'ORG', \(email), \(email), 'x', true)
                """, logger: logger)
            let rows = try await registration.postgres.query(
                """
                INSERT INTO participant_studies (user_id, study_id, status, enrolled_at)
                VALUES (\(userId), 'CONSOLE1', 'inProgress', now()) RETURNING pseudonym
                """, logger: logger)
            for try await pseudonym in rows.decode(UUID.self) where consent { pat = pseudonym.uuidString.lowercased() }
            if consent {
                try await registration.postgres.query(
                    """
                    INSERT INTO consent_records (user_id, app_id, study_id, version, status, sharing, pdf_key, pdf_sha256, pdf_bytes)
                    VALUES (\(userId), 'CONSOLEAPP', 'CONSOLE1', '1.0', 'completed', 'true', \(key),
                            \(SHA256.hash(data: pdf).hexString), \(pdf.count))
                    """, logger: logger)
                try await registration.postgres.query(
                    """
                    INSERT INTO participant_activities (user_id, study_id, activity_id, activity_state, runs_total, runs_completed, runs_missed)
                    VALUES (\(userId), 'CONSOLE1', 'diary', 'inProgress', 10, 4, 1)
                    """, logger: logger)
            }
        }
        return pat
    }

    @Test func aStudyAdminSeesParticipantsAndGetsTheSignedPDFAndAViewerSeesNoAddressOrPDF() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let pat = try await Self.seed(try #require(f.registration))
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let list = try await f.browser.get("/studies/CONSOLE1/participants")
            #expect(list.status == .ok)
            #expect(list.html.contains("pat@participants.test") && list.html.contains("quinn@participants.test"))
            #expect(list.html.contains(#"data-participant="\#(pat)""#))
            // Statuses in a coordinator's words, in the list and in its filter.
            #expect(list.html.contains("<td>Taking part</td>") && !list.html.contains("<td>inProgress</td>"))
            #expect(list.html.contains(#"<option value="yetToJoin">Not joined yet</option>"#))
            #expect(list.html.contains("<th scope=\"row\"><code>diary</code></th><td class=\"number\">0</td><td class=\"number\">1</td><td class=\"number\">1</td>"),
                    "diary: Pat is behind (a run missed), Quinn never reported it")
            // Sorted by a column's heading: newest enrollment first (Quinn joined after Pat).
            let newest = try await f.browser.get("/studies/CONSOLE1/participants?sort=enrolledAt&order=desc")
            let quinnAt = try #require(newest.html.range(of: "quinn@participants.test")).lowerBound
            let patAt = try #require(newest.html.range(of: "pat@participants.test")).lowerBound
            #expect(quinnAt < patAt)
            #expect(newest.html.contains(#"aria-sort="descending"><a href="/studies/CONSOLE1/participants?sort=enrolledAt&amp;order=asc">Enrolled</a>"#))
            let oldest = try await f.browser.get("/studies/CONSOLE1/participants?sort=enrolledAt")
            #expect(try #require(oldest.html.range(of: "pat@participants.test")).lowerBound
                < (try #require(oldest.html.range(of: "quinn@participants.test")).lowerBound))
            let search = try await f.browser.get("/studies/CONSOLE1/participants?q=quinn")
            #expect(search.html.contains("quinn@participants.test") && !search.html.contains("pat@participants.test"))

            let detail = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(detail.status == .ok)
            #expect(detail.html.contains("pat@participants.test"))
            #expect(detail.html.contains("<td><code>diary</code></td>"))
            #expect(detail.html.contains("<td>In progress</td>"), "the activity's state in words")
            let link = try #require(detail.html.firstMatch(of: /href="(\/studies\/CONSOLE1\/participants\/[^"]+\/pdf)"/)?.1)
            let pdf = try await f.browser.get(String(link))
            #expect(pdf.status == .ok)
            #expect(pdf.headers[.contentType] == "application/pdf")
            #expect(pdf.data == Self.pdf, "the same bytes the app uploaded")

            let password = try await f.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: f.browser.client)
            try await viewer.signIn("viewer@console.test", password)
            let viewed = try await viewer.get("/studies/CONSOLE1/participants")
            #expect(viewed.status == .ok)
            #expect(viewed.html.contains(#"data-participant="\#(pat)""#))
            #expect(!viewed.html.contains("@participants.test"), "a viewer sees pseudonymous ids only")
            let viewedDetail = try await viewer.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(!viewedDetail.html.contains("@participants.test"))
            #expect(!viewedDetail.html.contains("/pdf\""), "no download link for a viewer")
            let refused = try await viewer.get(String(link))
            #expect(refused.status == .forbidden)
            #expect(!refused.data.starts(with: Array("%PDF".utf8)))
        }
    }

    /// Seeds Pat and Quinn, publishes CONSOLE1 again with a daily diary at 09:00 started thirty
    /// days ago, and has Pat's app report diary run 1 completed; Pat's participant id.
    static func seedWithDiary(_ f: ConsoleFixture) async throws -> String {
        let registration = try #require(f.registration)
        let pat = try await seed(registration)
        try await publishDiary(f)
        try await registration.postgres.query(
            "UPDATE participant_activities SET activity_state = 'completed', activity_run_id = '1' WHERE activity_id = 'diary'",
            logger: Logger(label: "test"))
        return pat
    }

    /// Publishes CONSOLE1 again with a daily diary at 09:00, started thirty days ago.
    static func publishDiary(_ f: ConsoleFixture) async throws {
        var document = try await f.draft().json
        let started = ISO8601DateFormatter.string(from: Date().addingTimeInterval(-30 * 86_400), timeZone: .gmt, formatOptions: [.withFullDate])
        document["activities"] = [[
            "activityId": "diary", "title": "Diary",
            "schedule": ["frequency": "daily", "startDate": started, "endDate": "2030-12-31", "dailyTimes": ["09:00"]],
            "steps": [["type": "question", "resultType": "boolean", "key": "rested", "title": "Rested?"]],
        ]]
        let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        let (saved, savedBody, _) = try await ConsoleFixture.send(f.metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: f.rootToken, body: body)
        try #require(saved == .ok, "\(String(buffer: savedBody))")
        // Upcoming: withdrawn from publication and published again, with the diary.
        #expect(try await ConsoleFixture.send(f.metadata, .post, "/admin/v1/studies/CONSOLE1/unpublish", token: f.rootToken).0 == .ok)
        let (published, publishedBody, _) = try await ConsoleFixture.send(f.metadata, .post, "/admin/v1/studies/CONSOLE1/publish", token: f.rootToken)
        try #require(published == .ok, "\(String(buffer: publishedBody))")
    }

    /// CONSOLE1 given a daily diary at 09:00 (Madrid) and published anew; Pat's app reports run 1
    /// done. Pat's page shows the server's runs: run 1 completed, the next ones upcoming, and the
    /// app's own counts (4 of 10 done, 1 missed) beside the server's, marked as differing.
    @Test func aParticipantsPageShowsTheirRunsBesideWhatTheirAppReports() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let pat = try await Self.seedWithDiary(f)

            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"<h2 id="runs-title">Runs</h2>"#))
            #expect(page.html.contains("in Europe/Madrid (the study&#39;s: nothing is known of theirs yet)"))
            // The summary: one completed (their app said so), the app's own counts beside, differing.
            let summary = try #require(page.html.firstMatch(of: /<tr data-activity="diary" class="disagrees">(.*?)<\/tr>/)?.1)
            #expect(summary.contains(#"<td class="number">1</td><td class="number">0</td>"#), "\(summary)")
            #expect(summary.contains("4 of 10 done, 1 missed"))
            // The timeline: run 1 completed, run 2 upcoming; a week ahead at most (8 runs).
            #expect(page.html.contains(#"<li class="run completed" data-run="1" data-state="completed""#))
            #expect(page.html.contains(#"<li class="run upcoming" data-run="2" data-state="upcoming""#))
            #expect(page.html.contains("said by their app"))
            let chips = page.html.matches(of: /<li class="run [a-z]+" data-run="\d+"/).count
            #expect((7...8).contains(chips), "\(chips) runs drawn")
            #expect(!page.html.contains("runs-unavailable"))

            // Three weeks earlier: before Pat enrolled, so no runs; three weeks later (from a week
            // ahead): 21 upcoming daily runs; and a link back to now from either.
            #expect(page.html.contains(#"<h3 id="timeline-title">The last two weeks and the week ahead</h3>"#))
            let earlier = try #require(page.html.firstMatch(of: /<a href="([^"]+)" rel="prev">Three weeks earlier<\/a>/)?.1)
            let before = try await f.browser.get(String(earlier))
            #expect(before.status == .ok)
            #expect(before.html.contains(#"<h3 id="timeline-title">Three weeks from "#) && before.html.contains("Back to now"))
            #expect(before.html.matches(of: /<li class="run [a-z]+" data-run="\d+"/).isEmpty)
            let later = try #require(before.html.firstMatch(of: /<a href="([^"]+)" rel="next">Three weeks later<\/a>/)?.1)
            let ahead = try await f.browser.get(String(try #require(
                try await f.browser.get(String(later)).html.firstMatch(of: /<a href="([^"]+)" rel="next">Three weeks later<\/a>/)?.1)))
            let shown = ahead.html.matches(of: /<li class="run ([a-z]+)" data-run="(\d+)"/).map { String($0.1) }
            #expect((21...22).contains(shown.count) && shown.allSatisfy { $0 == "upcoming" }, "\(shown)")
            // A day that is not one is refused by name.
            let refused = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)?timeline=2026-02-30")
            #expect(refused.status == .badRequest)
            #expect(refused.html.contains("timeline must be a date"))
        }
    }

    @Test func theAdherencePageShowsTheWeeksAndWhoIsBehindAndTheParticipantsPageTheirWeeks() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let registration = try #require(f.registration)
            let pat = try await Self.seedWithDiary(f)
            // Counted by registration's sweep with the app's word on run 1 (and the new schedule).
            try await eventually("Pat's diary counted with run 1 completed", within: .seconds(30)) {
                try await registration.postgres.count(
                    "SELECT count(*)::int FROM participant_activity_standings WHERE activity_id = 'diary' AND runs_completed = 1")
            } until: { $0 == 1 }

            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            // The page shows the twelve weeks up to today's in UTC. Pat's run 1 is at 09:00 in
            // Madrid on the day after he enrolled there: late on a Sunday in UTC, that day is
            // already Monday in Madrid, and the run's week is the next UTC week. Then the page is
            // asked for the weeks up to that one.
            let runDays = try await registration.postgres.count(
                "SELECT max(week - DATE '1970-01-01')::int FROM participant_run_weeks WHERE activity_id = 'diary'")
            let today = Int((Date().timeIntervalSince1970 / 86_400).rounded(.down))
            let until = runDays > today ? "until=\(GregorianDays.dateText(runDays))" : ""
            let page = try await f.browser.get("/studies/CONSOLE1/adherence" + (until.isEmpty ? "" : "?\(until)"))
            #expect(page.status == .ok)
            #expect(page.html.contains(#"<a href="/studies/CONSOLE1/adherence" aria-current="page">Adherence</a>"#))
            #expect(page.html.contains(#"id="adherence-weeks-chart""#))
            let weeks = try #require(page.html.firstMatch(of: /<table class="list" id="adherence-weeks">(.*?)<\/table>/.dotMatchesNewlines())?.1)
            #expect(weeks.contains("<code>diary</code>"))
            #expect(weeks.contains("1 of 1 · 100%"), "\(weeks)")
            #expect(page.html.contains("No one still in the study is behind by that much."))

            // Pat as if he had missed the last three runs (kept from being counted again while the
            // page is read): listed, with his app's own count beside the server's, differing.
            try await registration.postgres.query(
                "UPDATE participant_run_ledgers SET recount_at = 'infinity'", logger: Logger(label: "test"))
            try await registration.postgres.query(
                "UPDATE participant_activity_standings SET missed_in_a_row = 3, runs_missed = 3 WHERE activity_id = 'diary'",
                logger: Logger(label: "test"))
            // Named by his number in the study, as on every page, once his app's enrollment links it.
            let unlinked = try await f.browser.get("/studies/CONSOLE1/adherence?activity=diary&atLeast=2")
            #expect(unlinked.html.contains(#"<a href="/studies/CONSOLE1/participants/\#(pat)">Not enrolled yet</a>"#), "\(unlinked.html)")
            let peer = try #require(f.response)
            let appToken = try await ConsoleResponseDataTests.enroll(peer)
            try await registration.postgres.query(
                "UPDATE participant_studies SET participant_token_hash = \(SecureToken.hash(appToken)) WHERE pseudonym = \(UUID(uuidString: pat)!)",
                logger: Logger(label: "test"))
            let behind = try await f.browser.get("/studies/CONSOLE1/adherence?activity=diary&atLeast=2")
            let row = try #require(behind.html.firstMatch(of: /<tr data-participant="([0-9a-f-]+)" class="disagrees">(.*?)<\/tr>/)?.output)
            #expect(row.1 == pat)
            #expect(row.2.contains(#"<a href="/studies/CONSOLE1/participants/1">Participant 1</a>"#), "\(row.2)")
            #expect(row.2.contains(#"<td class="number">3</td><td>1 done · 3 missed</td><td>4 done · 1 missed <span class="badge">differs</span>"#), "\(row.2)")
            #expect(row.2.contains("Europe/Madrid"))
            #expect(behind.html.contains(#"<option value="diary" selected>diary</option>"#))
            let none = try await f.browser.get("/studies/CONSOLE1/adherence?atLeast=4")
            #expect(none.html.contains("No one still in the study is behind by that much."))
            // A filter the admin API refuses is said beside the form; the weeks still show.
            let refused = try await f.browser.get("/studies/CONSOLE1/adherence?atLeast=0" + (until.isEmpty ? "" : "&\(until)"))
            #expect(refused.status == .ok)
            #expect(refused.html.contains(#"id="behind-refused""#) && refused.html.contains("atLeast must be a whole number from 1 to 10000"))
            #expect(refused.html.contains(#"id="adherence-weeks""#))
            // Twelve weeks earlier: before the diary started, so no week has runs; back to now.
            let earlier = try #require(page.html.firstMatch(of: /<a href="([^"]+)" rel="prev">Twelve weeks earlier<\/a>/)?.1)
            let before = try await f.browser.get(String(earlier))
            #expect(before.status == .ok)
            #expect(before.html.contains("No run opened in these twelve weeks.") && before.html.contains("Back to now"))
            let badDay = try await f.browser.get("/studies/CONSOLE1/adherence?until=yesterday")
            #expect(badDay.status == .badRequest && badDay.html.contains("until must be a date"))

            // Pat's own page: his weekly report.
            let own = try await f.browser.getFollowing("/studies/CONSOLE1/participants/\(pat)")
            let report = try #require(own.html.firstMatch(of: /<table class="list" id="weekly-report">(.*?)<\/table>/.dotMatchesNewlines())?.1)
            #expect(report.contains("<code>diary</code>: 1 of 1 done, 0 missed"), "\(report)")
        }
    }

    @Test func aCSVWithABadLineIsRefusedWholeThenThreeAreInvitedAndOneRevoked() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let empty = try await f.browser.get("/studies/CONSOLE1/invitations")
            #expect(empty.status == .ok)
            let csrf = try #require(empty.input("csrf"))
            let site = try await f.browser.post("/studies/CONSOLE1/sites", [("csrf", csrf), ("name", "North Clinic"), ("location", "Leeds")])
            #expect(site.status == .seeOther)

            let bad = "email,site\nzoe@example.org,North Clinic\nnot-an-address,North Clinic\n"
            let refused = try await f.browser.post(
                "/studies/CONSOLE1/invitations/import", [("csrf", csrf)], files: [("csvFile", "bad.csv", Array(bad.utf8))])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("line 3: &#39;not-an-address&#39; is not an e-mail address"))
            #expect(!refused.html.contains(#"id="invitations""#), "nobody was invited")

            let good = "email,site\nana@example.org,North Clinic\nben@example.org,North Clinic\ncai@example.org,\n"
            let done = try await f.browser.post(
                "/studies/CONSOLE1/invitations/import", [("csrf", csrf)], files: [("csvFile", "invite.csv", Array(good.utf8))])
            #expect(done.status == .seeOther)
            let page = try await f.browser.get(try #require(done.location))
            #expect(page.html.contains("Everyone in the file is invited"))
            let rows = page.html.components(separatedBy: "<tr data-invitation=").dropFirst()
            try #require(rows.count == 3)
            #expect(rows.allSatisfy { $0.contains("state-invited") })
            let registration = try #require(f.registration)
            let mails = try await eventually("three invitation e-mails", within: .seconds(20)) {
                (try? FileManager.default.contentsOfDirectory(atPath: registration.mailDirectory.path))?.filter { $0.hasSuffix(".eml") }.count ?? 0
            } until: { $0 == 3 }
            #expect(mails == 3)

            // A row's markup, exactly as the template drew it (the rows are written in code now).
            let ben = try #require(rows.first { $0.contains("ben@example.org") })
            let benId = try #require(ben.firstMatch(of: /^"([0-9a-f-]{36})"/)?.1)
            let state = try #require(ben.firstMatch(of: /<span class="status state-invited">([^<]+)<\/span>/)?.1)
            let expires = try #require(ben.firstMatch(of: /<\/span><\/td><td>([^<]+)<\/td>/)?.1)
            let sent = try #require(ben.firstMatch(of: /<td class="number">([0-9]+)<\/td>/)?.1)
            let form = { (action: String, label: String, kind: String) in
                "<form method=\"post\" action=\"/studies/CONSOLE1/invitations/\(benId)/\(action)\" class=\"inline\">"
                    + "<input type=\"hidden\" name=\"csrf\" value=\"\(csrf)\"><button type=\"submit\" class=\"\(kind)\">\(label)</button></form>"
            }
            let expected =
                "\"\(benId)\"><td><code>\(benId.prefix(8))</code></td><td>ben@example.org</td><td>North Clinic</td>\n"
                + "        <td><span class=\"status state-invited\">\(state)</span></td><td>\(expires)</td><td class=\"number\">\(sent)</td>\n"
                + "        <td></td>\n"
                + "        <td>\n          \(form("resend", "Resend", "small"))\n          \(form("revoke", "Revoke", "small remove"))\n        </td></tr>\n"
            #expect(ben.hasPrefix(expected), "\(ben.prefix(900))")

            let ana = try #require(rows.first { $0.contains("ana@example.org") })
            let anaId = try #require(ana.firstMatch(of: /^"([0-9a-f-]{36})"/)?.1)
            let revoked = try await f.browser.post("/studies/CONSOLE1/invitations/\(anaId)/revoke", [("csrf", csrf)])
            #expect(revoked.status == .seeOther)
            let after = try await f.browser.get(try #require(revoked.location))
            let anaRow = try #require(after.html.components(separatedBy: "<tr data-invitation=").first { $0.contains("ana@example.org") })
            #expect(anaRow.contains("state-revoked"))
            #expect(!anaRow.contains("/revoke"), "a revoked invitation has no actions left")
            #expect(after.html.contains(#"<td class="number">2</td>"#), "the site counts two open invitations")
        }
    }
}
