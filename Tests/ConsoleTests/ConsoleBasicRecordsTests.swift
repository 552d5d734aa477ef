import Foundation
import HTTPTypes
import Testing
import TestSupport

/// WCP's own fields and manual check-list in the console: the basic information keeps the full
/// name, support e-mail, estimated duration and data partners (and an untouched page adds none);
/// the study's page lists the manual check-list, which editors tick and untick, with who ticked
/// each item and when, while a viewer only reads it.
@Suite(.needsCluster) struct ConsoleBasicRecordsTests {
    @Test func theBasicInformationKeepsWCPsFields() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/basics")
            #expect(page.status == .ok)
            for label in ["Full name", "Support e-mail", "Estimated duration", "Unit of the estimated duration", "Data partners"] {
                #expect(page.html.contains(">\(label)<"), "\(label)")
            }
            // Saved untouched: none of them appears in the draft.
            #expect(try await browser.post("/studies/CONSOLE1/basics", browser.form(of: page, [:])).status == .seeOther)
            let untouched = try await fixture.draft().json
            for member in ["fullName", "supportEmail", "estimatedDuration", "dataPartners"] {
                #expect(untouched[member] == nil, "\(member)")
            }

            let saved = try await browser.post(
                "/studies/CONSOLE1/basics",
                browser.form(of: page, [
                    "/fullName/en": "Sleep quality in shift workers: a twelve-week study", "/supportEmail": "sleep@example.org",
                    "/estimatedDuration/value": "3", "/estimatedDuration/unit": "months",
                    "/dataPartners": "Example University\r\n\r\nExample Hospital\r\n",
                ]))
            #expect(saved.status == .seeOther)
            let draft = try await fixture.draft().json
            #expect(draft["fullName"] as? String == "Sleep quality in shift workers: a twelve-week study")
            #expect(draft["supportEmail"] as? String == "sleep@example.org")
            let duration = try #require(draft["estimatedDuration"] as? [String: Any])
            #expect(duration["value"] as? Int == 3 && duration["unit"] as? String == "months")
            #expect(draft["dataPartners"] as? [String] == ["Example University", "Example Hospital"])

            // Refused, with every problem at its field and nothing saved.
            let shown = try await browser.get("/studies/CONSOLE1/basics")
            let refused = try await browser.post(
                "/studies/CONSOLE1/basics",
                browser.form(of: shown, ["/supportEmail": "sleep at example", "/estimatedDuration/value": "1000"]))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("href=\"#f-supportEmail-field\""))
            #expect(refused.html.contains("must be an e-mail address"))
            #expect(refused.html.contains("must be 1 to 999"))
            #expect(try await fixture.draft().json["supportEmail"] as? String == "sleep@example.org")
        }
    }

    @Test func editorsTickTheManualChecklistAndViewersReadIt() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1")
            #expect(page.status == .ok)
            #expect(page.html.contains("Before launch: confirmed by the team"))
            #expect(page.html.contains("0 of 11 ticked"))
            #expect(page.html.contains(#"<label for="tick-irbApproval">IRB review completed</label>"#))
            let csrf = try #require(page.input("csrf"))

            let ticked = try await browser.post("/studies/CONSOLE1/checklist", [("csrf", csrf), ("ticked", "irbApproval"), ("ticked", "appStoreApproval")])
            #expect(ticked.status == .seeOther)
            #expect(ticked.location == "/studies/CONSOLE1?ticked=1#manual-checklist")
            let shown = try await browser.get("/studies/CONSOLE1?ticked=1")
            #expect(shown.html.contains("The check-list is saved."))
            #expect(shown.html.contains("2 of 11 ticked"))
            #expect(shown.html.contains(#"id="tick-irbApproval" name="ticked" value="irbApproval" checked"#))
            #expect(shown.html.contains("Ticked by \(ConsoleFixture.rootEmail) on "))
            #expect(shown.html.contains(" UTC</strong>"), "the time says its zone")

            // Unticking one keeps the other.
            let form = browser.form(of: shown, ["ticked": nil]) + [("ticked", "appStoreApproval")]
            #expect(try await browser.post("/studies/CONSOLE1/checklist", form).status == .seeOther)
            let after = try await browser.get("/studies/CONSOLE1")
            #expect(after.html.contains("1 of 11 ticked"))
            #expect(!after.html.contains(#"value="irbApproval" checked"#))
            // The actions that publish say what the team has not confirmed yet.
            let actions = try await browser.get("/studies/CONSOLE1/actions")
            #expect(actions.html.contains("Confirmed by the team: 1 of 11 items"))
            #expect(actions.html.contains("Not yet: IRB review completed; Participant cohort identified;"))
            let notYet = try #require(actions.html.components(separatedBy: "Not yet: ").dropFirst().first?.components(separatedBy: "</p>").first)
            #expect(notYet.contains("Mobile app tested") && !notYet.contains("App store approval"), "the ticked item is not listed")

            // A viewer reads it, without a box to tick or a button; a crafted post is refused.
            let password = try await fixture.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: fixture.browser.client)
            try await viewer.signIn("viewer@console.test", password)
            let read = try await viewer.get("/studies/CONSOLE1")
            #expect(read.html.contains("1 of 11 ticked"))
            #expect(read.html.contains(#"value="appStoreApproval" checked disabled"#))
            #expect(!read.html.contains("Save the check-list"))
            let viewerCSRF = try #require(read.input("csrf"))
            let crafted = try await viewer.post("/studies/CONSOLE1/checklist", [("csrf", viewerCSRF), ("ticked", "irbApproval")])
            #expect(crafted.status == .forbidden)
            #expect(try await browser.get("/studies/CONSOLE1").html.contains("1 of 11 ticked"))
        }
    }

    /// An activity imported on its own: the summary's check-list asks for its schedule until
    /// its page is saved, the schedule in sight.
    @Test func anImportedActivitysPlaceholderScheduleIsFlaggedUntilItsPageIsSaved() async throws {
        try await ConsoleFixture.run { fixture in
            let design = #"{"activity": {"type": "questionnaire", "metadata": {"name": "Mood"}, "steps": [{"type": "question", "resultType": "boolean", "key": "ok", "title": "OK?"}]}}"#
            let (imported, _, _) = try await ConsoleFixture.send(
                fixture.metadata, .put, "/admin/v1/studies/CONSOLE1/draft/activities/mood", token: fixture.rootToken, body: design)
            #expect(imported == .created)
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let flagged = "mood still has the schedule its import gave it (once, from the launch until the study ends): choose when participants get it on its page"
            #expect(try await browser.get("/studies/CONSOLE1").html.contains(flagged))

            let page = try await browser.get("/studies/CONSOLE1/activities/mood")
            #expect(page.status == .ok)
            #expect(try await browser.post("/studies/CONSOLE1/activities/mood", browser.form(of: page, [:])).status == .seeOther)
            let activities = try #require(try await fixture.draft().json["activities"] as? [[String: Any]])
            let mood = try #require(activities.first { $0["activityId"] as? String == "mood" })
            #expect(mood["placeholderSchedule"] == nil)
            #expect((mood["schedule"] as? [String: Any])?["frequency"] as? String == "oneTime", "the schedule itself is kept")
            #expect(!(try await browser.get("/studies/CONSOLE1").html.contains("still has the schedule its import gave it")))
        }
    }
}
