import ConsoleCore
import Foundation
import HTTPTypes
import Testing
import TestSupport

/// Pages with lists (rows added on the page, then saved) and the actions page over the
/// lifecycle: what the status allows, the confirmation of what cannot be undone, and the admin
/// API's refusals shown where they apply.
@Suite(.needsCluster) struct ConsoleListAndActionTests {
    @Test func aRowAddedOnThePageIsSavedOnlyWithSave() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/eligibility")
            #expect(page.status == .ok)
            #expect(page.input("/eligibility/questions#count") == "0")
            let added = try await browser.post(
                "/studies/CONSOLE1/eligibility",
                browser.form(of: page, ["/eligibility/type": "combined", "op": "add /eligibility/questions"]))
            #expect(added.status == .ok)
            #expect(added.html.contains("The rows changed on this page only"))
            #expect(added.input("/eligibility/questions#count") == "1")
            #expect(added.html.contains("name=\"/eligibility/questions/0/key\""))
            let unsaved = try #require(try await fixture.draft().json["eligibility"] as? [String: Any])
            #expect(unsaved["type"] as? String == "token", "nothing saved yet")
            #expect((unsaved["questions"] as? [Any] ?? []).isEmpty)

            let saved = try await browser.post(
                "/studies/CONSOLE1/eligibility",
                browser.form(of: added, [
                    "/eligibility/questions/0/key": "adult", "/eligibility/questions/0/text/en": "Are you 18 or older?",
                    "/eligibility/questions/0/passingAnswer": "true", "op": nil,
                ]))
            #expect(saved.status == .seeOther)
            let eligibility = try #require(try await fixture.draft().json["eligibility"] as? [String: Any])
            #expect(eligibility["type"] as? String == "combined")
            let questions = try #require(eligibility["questions"] as? [[String: Any]])
            #expect(questions.count == 1)
            #expect(questions.first?["key"] as? String == "adult")
            #expect(questions.first?["passingAnswer"] as? Bool == true)

            // A second question added and never touched does not keep the page from saving: it is
            // not saved.
            let second = try await browser.post(
                "/studies/CONSOLE1/eligibility", browser.form(of: try await browser.get("/studies/CONSOLE1/eligibility"), ["op": "add /eligibility/questions"]))
            #expect(second.input("/eligibility/questions#count") == "2")
            let blank = try await browser.post("/studies/CONSOLE1/eligibility", browser.form(of: second, ["op": nil]))
            #expect(blank.status == .seeOther, "\(blank.html.components(separatedBy: "problems").dropFirst().first ?? "")")
            #expect((try await fixture.draft().json["eligibility"] as? [String: Any])?["questions"] as? [[String: Any]] != nil)
            #expect(((try await fixture.draft().json["eligibility"] as? [String: Any])?["questions"] as? [[String: Any]])?.count == 1)

            // A problem inside a row is shown at the row's field.
            let again = try await browser.get("/studies/CONSOLE1/eligibility")
            let refused = try await browser.post(
                "/studies/CONSOLE1/eligibility", browser.form(of: again, ["/eligibility/questions/0/text/en": ""]))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("href=\"#f-eligibility-questions-0-text-field\""))
            #expect(refused.html.contains("id=\"f-eligibility-questions-0-text-problems\""))
        }
    }

    @Test func theActionsPageOffersWhatTheStatusAllowsAndTheAPIDecides() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/actions")
            #expect(page.status == .ok)
            #expect(page.html.contains("value=\"publish\""))
            #expect(page.html.contains("value=\"launch\""))
            #expect(!page.html.contains("value=\"pause\""), "a draft cannot be paused")
            #expect(page.html.contains("Nothing has been published yet."))
            let csrf = try #require(page.input("csrf"))

            let launched = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "launch")])
            #expect(launched.status == .seeOther)
            let after = try await browser.get(launched.location ?? "")
            #expect(after.html.contains("Done: launch."))
            #expect(after.html.contains("value=\"pause\""))
            #expect(after.html.contains("<td>1.0</td>"))
            let (_, summary, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/CONSOLE1", token: fixture.rootToken)
            #expect(String(buffer: summary).contains(#""status":"active""#))

            // Nothing changed since: the preview says so and offers nothing to confirm; confirmed
            // anyway, the admin API refuses the update, and the page says why.
            let preview = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "publish-updates")])
            #expect(preview.status == .ok)
            #expect(preview.html.contains("Nothing has changed since version 1.0: there is nothing to publish."))
            #expect(!preview.html.contains("Publish these updates"))
            let nothing = try await browser.post(
                "/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "publish-updates"), ("confirm", "yes")])
            #expect(nothing.status == .conflict)
            #expect(nothing.html.contains("id=\"problems\""))

            // Closing for good needs the confirmation; without it nothing happens.
            let unconfirmed = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "deactivate")])
            #expect(unconfirmed.status == .unprocessableContent)
            #expect(unconfirmed.html.contains("cannot be undone"))
            let (_, still, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/CONSOLE1", token: fixture.rootToken)
            #expect(String(buffer: still).contains(#""status":"active""#))
            let closed = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "deactivate"), ("confirm", "yes")])
            #expect(closed.status == .seeOther)
            let final = try await browser.get("/studies/CONSOLE1/basics")
            #expect(!final.html.contains("name=\"/name/en\""), "a closed study's draft is read-only")
        }
    }

    @Test func aStudyIsPublishedForTestingAndItsLaunchIsConfirmedAsRemovingTheTestersData() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await browser.get("/studies/CONSOLE1/actions")
            #expect(page.html.contains("value=\"publish-for-testing\""))
            let csrf = try #require(page.input("csrf"))
            let published = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "publish-for-testing")])
            #expect(published.status == .seeOther)
            let testing = try await browser.get(published.location ?? "")
            #expect(testing.html.contains("Done: publish for testing."))
            #expect(testing.html.contains("In testing"))
            #expect(testing.html.contains("id=\"testing-note\""))
            #expect(testing.html.contains("value=\"end-testing\"") && testing.html.contains("value=\"launch\""))
            #expect(testing.html.contains(ActionChoice.testDataRemoved))
            #expect(!testing.html.contains("value=\"publish\""), "an upcoming listing is not offered from testing")

            // Launching from testing removes the testers' data: unconfirmed, nothing happens.
            let unconfirmed = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "launch")])
            #expect(unconfirmed.status == .unprocessableContent)
            #expect(unconfirmed.html.contains("cannot be undone"))
            let (_, still, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/CONSOLE1", token: fixture.rootToken)
            #expect(String(buffer: still).contains(#""status":"testing""#))
            let launched = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "launch"), ("confirm", "yes")])
            #expect(launched.status == .seeOther)
            let (_, active, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/CONSOLE1", token: fixture.rootToken)
            #expect(String(buffer: active).contains(#""status":"active""#))
        }
    }

    @Test func anEditorSeesTheActionsButCannotTakeThem() async throws {
        try await ConsoleFixture.run { fixture in
            let password = try await fixture.makeAdmin("editor@console.test", role: "editor")
            let browser = fixture.browser
            try await browser.signIn("editor@console.test", password)
            let page = try await browser.get("/studies/CONSOLE1/actions")
            #expect(page.status == .ok)
            #expect(page.html.contains("need the study admin role"))
            #expect(!page.html.contains("<button type=\"submit\" class=\"primary\">Launch</button>"))
            let csrf = try #require(page.input("csrf"))
            let crafted = try await browser.post("/studies/CONSOLE1/actions", [("csrf", csrf), ("action", "launch")])
            #expect(crafted.status == .forbidden)
            let (_, summary, _) = try await ConsoleFixture.send(fixture.metadata, .get, "/admin/v1/studies/CONSOLE1", token: fixture.rootToken)
            #expect(String(buffer: summary).contains(#""status":"pre_launch""#))
        }
    }
}

extension ConsoleListAndActionTests {
    @Test func anActivityIsBuiltStepByStepEachStepOnItsPageAndAChangedTypeLeavesNoOldFormat() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let list = try await browser.get("/studies/CONSOLE1/activities")
            #expect(list.status == .ok)
            let added = try await browser.post("/studies/CONSOLE1/activities", browser.form(of: list, ["op": "add /activities"]))
            let saved = try await browser.post(
                "/studies/CONSOLE1/activities",
                browser.form(of: added, ["op": nil, "/activities/0/activityId": "sleep", "/activities/0/title/en": "Sleep", "/activities/0/type": "questionnaire"]))
            // Saved, with the warning that it has no steps yet.
            #expect(saved.status == .ok)
            #expect(saved.html.contains("Saved, but incomplete"))
            #expect(saved.html.contains("the activity has no steps"))
            let listed = try await browser.get("/studies/CONSOLE1/activities")
            #expect(listed.html.contains("href=\"/studies/CONSOLE1/activities/sleep\""))

            // The activity's page adds the step with its kind and response type.
            var page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            #expect(page.status == .ok)
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": "add /activities/0/steps"]))
            #expect(page.html.contains("name=\"/activities/0/steps/0/resultType\""))
            #expect(!page.html.contains("name=\"/activities/0/steps/0/format/maxValue\""))
            let first = try await browser.post(
                "/studies/CONSOLE1/activities/sleep",
                browser.form(of: page, [
                    "op": nil, "/activities/0/steps/0/key": "quality", "/activities/0/steps/0/title/en": "How well?",
                    "/activities/0/steps/0/resultType": "scale",
                ]))
            #expect(first.status == .seeOther)
            var step = try #require(((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
            #expect(step["resultType"] as? String == "scale")
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            #expect(page.html.contains("href=\"/studies/CONSOLE1/activities/sleep/steps/quality\""))

            // The step's page: its format.
            page = try await browser.get("/studies/CONSOLE1/activities/sleep/steps/quality")
            #expect(page.status == .ok)
            #expect(page.html.contains("name=\"/activities/0/steps/0/format/maxValue\""))
            // Every problem of the page at once, each at its field and linked from the top, in a
            // coordinator's words (no JSON pointer, no member's name); nothing is saved.
            let refused = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/quality",
                browser.form(of: page, [
                    "/activities/0/steps/0/format/minValue": "10", "/activities/0/steps/0/format/maxValue": "0",
                    "/activities/0/steps/0/format/step": "-1",
                ]))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("href=\"#f-activities-0-steps-0-format-maxValue-field\""))
            #expect(refused.html.contains("href=\"#f-activities-0-steps-0-format-step-field\""))
            let report = try #require(refused.html.components(separatedBy: #"id="problems""#).dropFirst().first?.components(separatedBy: "</div>").first)
            #expect(report.contains("must be greater than the lowest value"))
            #expect(report.contains("must be greater than 0"))
            #expect(!report.contains("<code") && !report.contains("/activities/0"), "no pointer: \(report)")
            let words = report.replacingOccurrences(of: "<[^>]*>", with: " ", options: .regularExpression)
            #expect(words.range(of: #"\b[a-z]+[A-Z][a-zA-Z]*\b"#, options: .regularExpression) == nil, "no member's name: \(words)")
            step = try #require(((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
            #expect((step["format"] as? [String: Any])?["maxValue"] == nil)
            let formatted = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/quality",
                browser.form(of: page, [
                    "/activities/0/steps/0/format/minValue": "0", "/activities/0/steps/0/format/maxValue": "10",
                    "/activities/0/steps/0/format/step": "1",
                ]))
            #expect(formatted.location == "/studies/CONSOLE1/activities/sleep/steps/quality?saved=1")
            step = try #require(((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
            #expect((step["format"] as? [String: Any])?["maxValue"] as? Int == 10)

            // Another type: its own fields, and nothing of the scale's is left; a new key moves the page.
            page = try await browser.get("/studies/CONSOLE1/activities/sleep/steps/quality")
            page = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/quality",
                browser.form(of: page, ["op": "show /activities/0/steps/0/resultType", "/activities/0/steps/0/resultType": "text"]))
            #expect(!page.html.contains("name=\"/activities/0/steps/0/format/maxValue\""))
            let second = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/quality",
                browser.form(of: page, ["op": nil, "/activities/0/steps/0/format/maxLength": "80", "/activities/0/steps/0/key": "notes"]))
            #expect(second.location == "/studies/CONSOLE1/activities/sleep/steps/notes?saved=1")
            step = try #require(((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
            #expect(step["resultType"] as? String == "text")
            #expect(step["key"] as? String == "notes")
            let format = try #require(step["format"] as? [String: Any])
            #expect(format["maxLength"] as? Int == 80)
            #expect(format["maxValue"] == nil && format["minValue"] == nil)
            #expect(try await browser.get("/studies/CONSOLE1/activities/sleep/steps/quality").status == .notFound)
            #expect(try await browser.get("/studies/CONSOLE1/activities/sleep/steps/notes").status == .ok)

            // A version label, as a moved study keeps it; emptied, the versions are numbered again.
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            #expect(page.html.contains("name=\"/activities/0/versionLabel\""))
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": nil, "/activities/0/versionLabel": "3"]))
            #expect(page.status == .seeOther)
            #expect((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["versionLabel"] as? String == "3")
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": nil, "/activities/0/versionLabel": "3 beta"]))
            #expect(page.html.contains("1 to 32 letters, digits, dots, hyphens or underscores"), "a bad label is shown with its reason")
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": nil, "/activities/0/versionLabel": ""]))
            #expect((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["versionLabel"] == nil)

            // The activity's page shows a saved step and moves it, but changes it only on its page:
            // a second step added, the saved one still shown; then moved first; a crafted key ignored.
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            #expect(!page.html.contains("name=\"/activities/0/steps/0/key\""))
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": "add /activities/0/steps"]))
            #expect(page.html.contains(">notes<"), "the saved step is still shown on the page drawn again")
            #expect(page.html.contains("name=\"/activities/0/steps/1/key\""))
            page = try await browser.post(
                "/studies/CONSOLE1/activities/sleep",
                browser.form(of: page, [
                    "/activities/0/steps/1/key": "welcome", "/activities/0/steps/1/type": "instruction", "/activities/0/steps/1/resultType": nil,
                ]))
            #expect(page.status == .seeOther)
            page = try await browser.get("/studies/CONSOLE1/activities/sleep")
            page = try await browser.post("/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": "up /activities/0/steps/1"]))
            let moved = try await browser.post(
                "/studies/CONSOLE1/activities/sleep", browser.form(of: page, ["op": nil, "/activities/0/steps/0/key": "crafted"]))
            #expect(moved.status == .seeOther)
            let steps = try #require((try await fixture.draft().json["activities"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])
            #expect(steps.count == 2)
            #expect(steps.map { $0["key"] as? String } == ["welcome", "notes"])
            #expect((steps[1]["format"] as? [String: Any])?["maxLength"] as? Int == 80)

            // Renamed while saved with a warning (a choice question without choices): the page
            // shown is the new key's, so its next save goes there.
            page = try await browser.get("/studies/CONSOLE1/activities/sleep/steps/welcome")
            page = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/welcome",
                browser.form(of: page, ["op": "show /activities/0/steps/0/type", "/activities/0/steps/0/type": "question"]))
            let renamed = try await browser.post(
                "/studies/CONSOLE1/activities/sleep/steps/welcome",
                browser.form(of: page, ["op": nil, "/activities/0/steps/0/resultType": "textChoice", "/activities/0/steps/0/key": "hello"]))
            #expect(renamed.status == .ok)
            #expect(renamed.html.contains("Saved, but incomplete"))
            #expect(renamed.html.contains("action=\"/studies/CONSOLE1/activities/sleep/steps/hello\""))
            #expect(try await browser.get("/studies/CONSOLE1/activities/nosuch").status == .notFound)
        }
    }
}

extension ConsoleListAndActionTests {
    @Test func aDesignFromAnotherServerIsImportedAndPreviewedScreenByScreen() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let form = try await browser.get("/studies/CONSOLE1/import")
            #expect(form.status == .ok)
            let csrf = try #require(form.input("csrf"))
            let design = #"""
                {"message": "SUCCESS", "activity": {"type": "questionnaire", "metadata": {"name": "Mood", "activityId": "mood"},
                 "steps": [
                   {"type": "question", "resultType": "scale", "key": "level", "title": "How is your mood?", "skippable": false,
                    "format": {"minValue": 0, "maxValue": 10, "step": 1, "default": 5, "minDesc": "Low", "maxDesc": "High"}},
                   {"type": "question", "resultType": "textChoice", "key": "why", "title": "Why?", "skippable": true,
                    "format": {"selectionStyle": "Single", "textChoices": [{"text": "Sleep", "value": "sleep"}, {"text": "Work", "value": "work"}]}}
                 ]}}
                """#
            let broken = try await browser.post("/studies/CONSOLE1/import", [("csrf", csrf), ("activityId", "mood"), ("design", "{\"activity\": 3}")])
            #expect(broken.status == .unprocessableContent)
            #expect(broken.html.contains("Not imported"))
            // The design as a file (the page's form is multipart), as an admin exports it from another server.
            let imported = try await browser.post(
                "/studies/CONSOLE1/import", [("csrf", csrf), ("activityId", "mood"), ("design", "")], files: [("designFile", "mood.json", Array(design.utf8))])
            #expect(imported.status == .seeOther)
            #expect(imported.location == "/studies/CONSOLE1/activities/mood?saved=1")
            let activities = try #require(try await fixture.draft().json["activities"] as? [[String: Any]])
            #expect(activities.map { $0["activityId"] as? String } == ["mood"])
            #expect((activities.first?["steps"] as? [Any])?.count == 2)

            let preview = try await browser.get("/studies/CONSOLE1/activities/mood/preview")
            #expect(preview.status == .ok)
            #expect(preview.html.contains("How is your mood?"))
            #expect(preview.html.contains("type=\"range\" min=\"0\" max=\"10\""))
            #expect(preview.html.contains("○ Sleep"))
            #expect(preview.html.contains("may be skipped"))
            #expect(try await browser.get("/studies/CONSOLE1/activities/nosuch/preview").status == .notFound)
        }
    }
}
