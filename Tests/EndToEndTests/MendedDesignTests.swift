import Foundation
import StudyModels
import Testing
import TestSupport

/// A study whose published design cannot hold its answers, with the real executables: publishing
/// it is refused at the question; one published before that check existed has the response the
/// app sent kept, refused with the question named, its run shown as done with answers not stored,
/// and stored (the run completed) once the team has mended the activity, published, and
/// reprocessed it against the new version (docs/response-api.md, Reprocessing).
@Suite(.needsCluster) struct MendedDesignTests {
    /// The daily check-in always open (one run, run 1, from enrolment), its `lastAlcohol` date
    /// question with its kind (`format.style`) as given: none is how the console saved it when
    /// the kind was left unset on the question's own page.
    static func dailyDraft(_ admin: Admin, dateKind: String?) async throws -> [String: Any] {
        let draft = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
        #expect(draft.status == 200)
        var document = try #require(try JSONSerialization.jsonObject(with: draft.body) as? [String: Any])
        var activities = try #require(document["activities"] as? [[String: Any]])
        let index = try #require(activities.firstIndex { $0["activityId"] as? String == "daily" })
        var steps = try #require(activities[index]["steps"] as? [[String: Any]])
        let step = try #require(steps.firstIndex { $0["key"] as? String == "lastAlcohol" })
        var format = steps[step]["format"] as? [String: Any] ?? [:]
        format["style"] = dateKind
        steps[step]["format"] = format
        activities[index]["steps"] = steps
        activities[index]["schedule"] = ["frequency": "ongoing"]
        activities[index]["reminder"] = nil
        document["activities"] = activities
        return document
    }

    static func publish(_ admin: Admin, _ document: [String: Any]) async throws -> Wire.Reply {
        let saved = try await admin.send(.PUT, "/admin/v1/studies/DEMOSTUDY/draft", json: document)
        #expect((200...201).contains(saved.status), "\(saved.status) \(saved.text)")
        return try await admin.send(.POST, "/admin/v1/studies/DEMOSTUDY/publish-updates")
    }

    /// The participant's daily run 1 as registration counts it, once it is in `state`.
    static func dailyRun(_ platform: Platform, participant: String, state: String) async throws -> JSONValue {
        let url = platform.registration.baseURL + "/admin/v1/studies/DEMOSTUDY/participants/\(participant)/runs"
        return try await eventually("daily run 1 \(state)", within: .seconds(60)) {
            let reply = try await Wire.send(.GET, url, headers: [("Authorization", "Bearer \(platform.adminToken)")])
            return reply.json?["runs"]?.array?.first { $0["activityId"]?.string == "daily" && $0["runId"]?.integer == 1 }
        } until: { $0?["state"]?.string == state }!
    }

    /// The study's responses as the admin API lists them, once none is pending.
    static func settled(_ platform: Platform) async throws -> [JSONValue] {
        try await eventually("every response settled") {
            let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
            let responses = list.json?["responses"]?.array ?? []
            return !responses.isEmpty && responses.allSatisfy({ $0["status"]?.string != "pending" }) ? responses : nil
        }
    }

    @Test func aResponseToADateQuestionWithoutItsKindIsStoredOnceTheActivityIsMended() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            // Publishing without the date question's kind is refused at the question: the
            // response service could not store its answers.
            let refused = try await Self.publish(admin, try await Self.dailyDraft(admin, dateKind: nil))
            #expect(refused.status == 422, "\(refused.text)")
            let problems = refused.json?["error"]?["problems"]?.array ?? []
            try #require(problems.count == 1, "\(refused.text)")
            #expect(problems[0]["message"]?.string == "answers to daily could not be stored: the date question 'lastAlcohol' has no kind (Date, or Date and time)")
            #expect(problems[0]["pointer"]?.string?.hasPrefix("/activities/0/steps/") == true, "\(refused.text)")

            // Complete, daily 1.1 goes out. A StudyStack of before the check published it without
            // the kind: the response service holds that design (as fetched then) for 1.1.
            let published = try await Self.publish(admin, try await Self.dailyDraft(admin, dateKind: "Date-Time"))
            #expect(published.status == 200, "\(published.text)")
            try await admin.waitForOutbox()
            let broken = try await Self.dailyDraft(admin, dateKind: nil)
            let daily = try #require((broken["activities"] as? [[String: Any]])?.first { $0["activityId"] as? String == "daily" })
            let design: [String: Any] = [
                "activity": ["type": "questionnaire", "metadata": ["studyId": "DEMOSTUDY", "activityId": "daily", "version": "1.1"], "steps": daily["steps"] ?? []]
            ]
            let designText = String(decoding: try JSONSerialization.data(withJSONObject: design), as: UTF8.self)
            _ = try await platform.withResponseDatabase { client, logger in
                try await client.query(
                    "INSERT INTO activity_designs (study_key, activity_id, version, design) VALUES ('DEMOSTUDY', 'daily', '1.1', \(designText)::jsonb)",
                    logger: logger)
            }

            let app = platform.app(.ios)
            try await PlatformJourneyTests().signUp(app, "mended@example.org", platform: platform, deviceToken: nil)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let participant = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
            #expect(try await app.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": participant]]]
            ).status == 200)
            let submitted = try await app.processResponse(
                JourneyResponses.dailyResponse(participant: participant, name: "daily", version: "1.1", notes: "kept through a mend"))
            #expect(submitted.status == 200, "the app's contract is unchanged: \(submitted.text)")

            // Kept, refused with the question and what it lacks.
            var responses = try await Self.settled(platform)
            try #require(responses.count == 1)
            let id = try #require(responses[0]["id"]?.integer)
            #expect(responses[0]["status"]?.string == "error")
            #expect(
                responses[0]["errorMessage"]?.string
                    == "Unable to apply changes: the date question 'lastAlcohol' has no kind (Date, or Date and time)",
                "\(responses[0])")
            // The participant did the run, the study does not have its answers: never shown as completed.
            let participants = try await admin.send(.GET, platform.registration.baseURL + "/admin/v1/studies/DEMOSTUDY/participants")
            let pseudonym = try #require(participants.json?["participants"]?.array?.first?["participantId"]?.string)
            let notStored = try await Self.dailyRun(platform, participant: pseudonym, state: "notStored")
            #expect(notStored["completedBy"]?.array?.contains(.string("unstoredResponse")) == true, "\(notStored)")

            let reprocess = platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses/reprocess"
            // Against a version that does not exist, or against its own broken one: refused, nothing changed.
            for version in ["1.9", "1.1"] {
                let refused = try await admin.send(.POST, reprocess, json: ["ids": [id], "againstVersion": version])
                #expect(refused.status == 422, "\(version): \(refused.status) \(refused.text)")
                #expect(refused.text.contains("daily at version \(version)"), "\(refused.text)")
            }
            let badLabel = try await admin.send(.POST, reprocess, json: ["ids": [id], "againstVersion": "1.1; DROP"])
            #expect(badLabel.status == 400, "\(badLabel.text)")
            responses = try await Self.settled(platform)
            #expect(responses.count == 1 && responses[0]["status"]?.string == "error" && responses[0]["processedAgainstVersion"] == nil)

            // Mended and published: daily 1.2. Processed again against it, the answers are stored.
            let mended = try await Self.publish(admin, try await Self.dailyDraft(admin, dateKind: "Date"))
            #expect(mended.status == 200, "\(mended.text)")
            let done = try await admin.send(.POST, reprocess, json: ["ids": [id], "againstVersion": "1.2"])
            #expect(done.status == 200, "\(done.text)")
            #expect(done.json?["countReprocessed"]?.integer == 1)
            responses = try await Self.settled(platform)
            try #require(responses.count == 1)
            #expect(responses[0]["status"]?.string == "processed", "\(responses[0])")
            #expect(responses[0]["version"]?.string == "1.1", "the version it was sent for stays on record")
            #expect(responses[0]["processedAgainstVersion"]?.string == "1.2")
            let rows = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/tables/daily/rows")
            #expect(rows.status == 200, "\(rows.text)")
            let stored = rows.json?["rows"]?.array ?? []
            try #require(stored.count == 1, "\(rows.text)")
            // Each row is its values in the order of `columns`.
            let columns = (rows.json?["columns"]?.array ?? []).map { $0["name"]?.string ?? "" }
            let row = try #require(stored[0].array)
            try #require(row.count == columns.count, "\(rows.text)")
            let value = { (name: String) in columns.firstIndex(of: name).map { row[$0] } }
            #expect(value("notes") == .string("kept through a mend"), "\(rows.text)")
            #expect(value("lastAlcohol")?.string?.isEmpty == false, "the date answer is stored: \(rows.text)")

            // The run is completed now that its answers are stored.
            let completed = try await Self.dailyRun(platform, participant: pseudonym, state: "completed")
            #expect(completed["completedBy"]?.array?.contains(.string("response")) == true, "\(completed)")

            // The audit log says who chose which version.
            let reprocessed = try await platform.withResponseDatabase { client, logger in
                var details: [String] = []
                for try await text in try await client.query(
                    "SELECT details::text FROM audit_events WHERE action = 'responses.reprocessed'", logger: logger
                ).decode(String.self) { details.append(text) }
                return details
            }
            #expect(reprocessed.count == 1 && reprocessed[0].contains("\"againstVersion\": \"1.2\""), "\(reprocessed)")
        }
    }
}
