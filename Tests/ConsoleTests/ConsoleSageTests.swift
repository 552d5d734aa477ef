import Foundation
import HTTPTypes
import Logging
import NIOCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// A Sage assessment through the console: imported from its file, shown on its activity's page
/// with why it is Sage-only, listed as such, and downloaded as imported.
@Suite(.needsCluster) struct ConsoleSageTests {
    static let readmeSurvey = Conformance.root.appendingPathComponent("sage/README-extract/README_ExampleSurvey.json")

    @Test func aSageAssessmentIsImportedShownAndDownloaded() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let form = try await browser.get("/studies/CONSOLE1/import")
            #expect(form.html.contains("A Sage assessment"))
            let csrf = try #require(form.input("csrf"))
            let survey = try Data(contentsOf: Self.readmeSurvey)

            // A broken one: the page says what, and where, and nothing is saved.
            let broken = try await browser.post(
                "/studies/CONSOLE1/import",
                [("csrf", csrf), ("format", "sage"), ("activityId", ""), ("design", #"{"type": "assessment", "identifier": "bad", "steps": []}"#)])
            #expect(broken.status == .unprocessableContent)
            #expect(broken.html.contains("Not imported"))
            #expect(broken.html.contains("must hold at least one step"))
            let before = try await fixture.draft().json["activities"] as? [Any]
            #expect(before?.isEmpty ?? true)

            // Sage's README survey as a file; its identifier names the activity.
            let imported = try await browser.post(
                "/studies/CONSOLE1/import", [("csrf", csrf), ("format", "sage"), ("activityId", ""), ("design", "")],
                files: [("designFile", "surveyA.json", Array(survey))])
            #expect(imported.status == .seeOther)
            #expect(imported.location == "/studies/CONSOLE1/activities/surveyA?saved=1")

            let page = try await browser.get("/studies/CONSOLE1/activities/surveyA")
            #expect(page.status == .ok)
            #expect(page.html.contains("Imported from a Sage assessment"))
            #expect(page.html.contains("the MyStudies apps are not sent this activity"))
            #expect(page.html.contains("steps › 7 › choices › 4 › selectorType: "), "its place in the assessment, in its members' names")
            #expect(!page.html.contains(#"<code class="pointer">"#))
            // No MyStudies step editor for steps the apps are never sent; the schedule stays.
            #expect(!page.html.contains("Add step"))
            #expect(!page.html.contains("Preview it as the app shows it"))
            #expect(page.html.contains("Its steps are the Sage assessment it was imported from"))
            #expect(page.html.contains("Schedule"))
            // Saving its page changes the title, and keeps the assessment and its reasons.
            let saved = try await browser.post("/studies/CONSOLE1/activities/surveyA", browser.form(of: page, ["/activities/0/title/en": "Survey A"]))
            #expect(saved.status == .seeOther, "\(saved.html)")
            let stored = try #require((try await fixture.draft().json["activities"] as? [[String: Any]])?.first)
            #expect(((stored["title"] as? [String: Any])?["en"] as? String ?? stored["title"] as? String) == "Survey A")
            #expect(((stored["assessment"] as? [String: Any])?["sageOnly"] as? [Any])?.count == 3)
            let list = try await browser.get("/studies/CONSOLE1/activities")
            #expect(list.html.contains("Sage only (not sent to the MyStudies apps)"))
            #expect(list.html.contains("href=\"/studies/CONSOLE1/activities/surveyA\""))

            let download = try await browser.get("/studies/CONSOLE1/activities/surveyA/assessment.json")
            #expect(download.status == .ok)
            let original = try JSONSerialization.jsonObject(with: survey) as? NSDictionary
            let downloaded = try JSONSerialization.jsonObject(with: Data(download.html.utf8)) as? NSDictionary
            #expect(original == downloaded)
            #expect(try await browser.get("/studies/CONSOLE1/activities/nosuch/assessment.json").status == .notFound)
        }
    }

    /// A participant's Sage archives on their page, with their files, each downloadable; and the
    /// study's certificate from a Sage activity's page.
    @Test func aParticipantsSageArchivesAreListedWithTheirFiles() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            let registration = try #require(f.registration)
            let activities = [StudyEvent.ActivityVersion(activityId: "sleep", version: 1, label: "1.0", type: "questionnaire")]
            #expect(try await ConsoleFixture.announce("CONSOLE1", to: peer.client, version: 100, activities: activities) == .ok)
            let design = #"{"activity": {"metadata": {"activityId": "sleep", "version": "1.0"}, "steps": []}, "assessment": \#(SageArchiveSamples.assessment)}"#
            try await peer.postgres.query(
                "INSERT INTO activity_designs (study_key, activity_id, version, design) VALUES ('CONSOLE1', 'sleep', '1.0', \(design)::jsonb)",
                logger: Logger(label: "test"))
            let pat = try await ConsoleParticipantTests.seed(registration)
            let appToken = try await ConsoleResponseDataTests.enroll(peer)
            let posted = try await peer.client.execute(
                uri: "/sage/v1/studies/CONSOLE1/archives", method: .post,
                headers: [.authorization: "Bearer \(appToken)", .contentType: "application/zip"],
                body: ByteBuffer(bytes: SageArchiveSamples.archive())
            ) { ($0.status, String(buffer: $0.body)) }
            #expect(posted.0 == .created, "\(posted.1)")
            _ = try await ConsoleResponseDataTests.settled(peer, count: 1)
            try await registration.postgres.query(
                """
                UPDATE participant_studies SET participant_token_hash = \(SecureToken.hash(appToken))
                WHERE pseudonym = \(UUID(uuidString: pat)!)
                """, logger: Logger(label: "test"))

            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.getFollowing("/studies/CONSOLE1/participants/\(pat)")
            #expect(page.status == .ok)
            #expect(page.html.contains("Sage result archives"))
            let rows = page.html.components(separatedBy: #"<tr data-archive=""#).dropFirst()
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(row.contains("<code>sleep</code>"))
            #expect(row.contains("<td>Stored"), "its response's status in words")
            for name in ["metadata.json", "assessmentResult.json", "motion.json"] { #expect(row.contains(">\(name)</a>"), "\(name)") }
            #expect(!row.contains("not named in its manifest"), "metadata.json is the manifest itself")
            let motionHref = try #require(
                row.components(separatedBy: #"<a href=""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }.first { $0.contains("name=motion") })
            let motion = try await f.browser.get(motionHref.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(motion.status == .ok)
            #expect(motion.html.contains("uptime"))
            let zipHref = try #require(row.components(separatedBy: #"<a href=""#).dropFirst().first.map { String($0.prefix { $0 != "\"" }) })
            let zip = try await f.browser.get(zipHref)
            #expect(zip.status == .ok)
            #expect(zip.html.hasPrefix("PK"))

            let certificate = try await f.browser.get("/studies/CONSOLE1/sage-certificate")
            #expect(certificate.status == .ok)
            #expect(certificate.html.hasPrefix("-----BEGIN CERTIFICATE-----"))
        }
    }
}
