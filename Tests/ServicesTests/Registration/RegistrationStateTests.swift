import Foundation
import HTTPTypes
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import StudyModels
import Testing
import TestSupport

/// Profile, study state and activity state as the apps use them: J2's profile updates, J4's
/// enrollment steps 5 and 7, J6's activity updates with offline replays.
@Suite(.needsCluster) struct RegistrationStateTests {
    @Test func profileSettingsAndTheDeviceToken() async throws {
        try await RegistrationHarness.run { h in
            let (userId, auth, _) = try await h.signUp("lea@example.org")
            var profile = try await h.call("userProfile", method: .get, auth: auth, userId: userId)
            #expect(profile.status == .ok)
            #expect(profile.json["profile"] == .object(["emailId": .string("lea@example.org"), "firstName": .string(""), "lastName": .string("")]))
            #expect(profile.json["settings"] == .object([
                "remoteNotifications": .bool(false), "localNotifications": .bool(false), "touchId": .bool(false),
                "passcode": .bool(false), "reminderLeadTime": .string("00:00"), "locale": .string(""),
            ]))

            // Variant A, after sign-up: settings, and the bundle id where the token goes (not kept).
            let variantA: [String: Any] = [
                "settings": ["remoteNotifications": true, "touchId": false, "passcode": true, "localNotifications": true,
                             "reminderLeadTime": "00:15", "locale": "es"],
                "info": ["appVersion": "1.0.4.12", "os": "ios", "deviceToken": "org.example.mystudies"], "participantInfo": [],
            ]
            #expect(try await h.call("updateUserProfile", body: variantA, auth: auth, userId: userId).status == .ok)
            // Variant B, when APNs answers: the real token.
            let token = String(repeating: "ab12", count: 16)
            let variantB: [String: Any] = ["info": ["appVersion": "1.0.4.12", "os": "ios", "deviceToken": token], "participantInfo": []]
            #expect(try await h.call("updateUserProfile", body: variantB, auth: auth, userId: userId).status == .ok)
            profile = try await h.call("userProfile", method: .get, auth: auth, userId: userId)
            #expect(profile.json["settings"] == .object([
                "remoteNotifications": .bool(true), "localNotifications": .bool(true), "touchId": .bool(false),
                "passcode": .bool(true), "reminderLeadTime": .string("00:15"), "locale": .string("es"),
            ]))
            let rows = try await h.postgres.query(
                "SELECT device_token, device_os, app_version FROM participant_sessions WHERE device_token IS NOT NULL",
                logger: .init(label: "t"))
            var devices: [(String?, String?, String?)] = []
            for try await row in rows.decode((String?, String?, String?).self) { devices.append(row) }
            #expect(devices.count == 1)
            #expect(devices.first?.0 == token && devices.first?.1 == "ios" && devices.first?.2 == "1.0.4.12")

            let bad = try await h.call(
                "updateUserProfile", body: ["settings": ["reminderLeadTime": "soon"]], auth: auth, userId: userId)
            #expect(bad.status == .badRequest)
            #expect(try await h.call("userProfile", method: .get, auth: auth, userId: userId).json["settings"]?.object?["reminderLeadTime"]
                == .string("00:15"))
        }
    }

    @Test func enrollmentAndActivityStateFollowTheApp() async throws {
        try await RegistrationHarness.run { h in
            let (userId, auth, _) = try await h.signUp("max@example.org")
            #expect(try await h.call("studyState", method: .get, auth: auth, userId: userId).json["studies"] == .array([]))

            // J4 step 5, then step 7 reads the enrollment date.
            let token = "0123456789abcdef0123456789abcdef"
            let joined = try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEPWELL", "status": "inProgress", "participantId": token]]],
                auth: auth, userId: userId)
            #expect(joined.status == .ok)
            var state = try await h.call("studyState", method: .get, auth: auth, userId: userId)
            guard case .array(let studies)? = state.json["studies"], case .object(let study)? = studies.first else {
                Issue.record("no studies")
                return
            }
            #expect(study["studyId"] == .string("SLEEPWELL"))
            #expect(study["status"] == .string("inProgress"))
            #expect(study["participantId"] == .string(token))
            #expect(study["bookmarked"] == .bool(false))
            #expect(study["completion"] == .number(0) && study["adherence"] == .number(0))
            let enrolled = try #require(study["enrolledDate"]?.text)
            #expect(enrolled.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$"#, options: .regularExpression) != nil)

            // J6: start, then complete run 1; the offline "inProgress" replayed afterwards is stale.
            let start: [String: Any] = ["studyId": "SLEEPWELL", "activity": [[
                "activityId": "daily", "activityRunId": "1", "activityState": "inProgress", "activityVersion": "1.0",
                "activityRun": ["total": 10, "completed": 0, "missed": 0],
            ]]]
            let done: [String: Any] = ["studyId": "SLEEPWELL", "activity": [[
                "activityId": "daily", "activityRunId": "1", "activityState": "completed", "activityVersion": "1.0",
                "activityRun": ["total": 10, "completed": 1, "missed": 0],
            ]]]
            #expect(try await h.call("updateActivityState", body: start, auth: auth, userId: userId).status == .ok)
            #expect(try await h.call("updateActivityState", body: done, auth: auth, userId: userId).status == .ok)
            #expect(try await h.call("updateActivityState", body: start, auth: auth, userId: userId).status == .ok)
            #expect(try await h.call("updateActivityState", body: done, auth: auth, userId: userId).status == .ok)
            // Participant-property sync shape, and the bookmark shape.
            let sync: [String: Any] = ["studyId": "SLEEPWELL", "activity": [[
                "activityId": "weekly", "activityStartDate": "2027-01-11T09:00:00.000-0500",
                "activityEndDate": "2027-04-05T23:59:59.000-0400", "anchorDateVersion": "1.0",
                "anchorDatecreatedDate": "2027-01-04T10:00:00.000-0500",
                "customScheduleRuns": [["runStartDate": "2027-01-11T09:00:00.000-0500", "runEndDate": "2027-01-17T23:59:59.000-0500"]],
            ]]]
            #expect(try await h.call("updateActivityState", body: sync, auth: auth, userId: userId).status == .ok)
            let bookmark: [String: Any] = ["activities": [["studyId": "SLEEPWELL", "activityId": "daily", "bookmarked": true]]]
            #expect(try await h.call("updateActivityState", body: bookmark, auth: auth, userId: userId).status == .ok)

            let activities = try await h.call("activityState", method: .get, query: "studyId=SLEEPWELL", auth: auth, userId: userId)
            guard case .array(let items)? = activities.json["activities"] else {
                Issue.record("no activities")
                return
            }
            #expect(items.count == 2)
            guard case .object(let daily)? = items.first, case .object(let weekly)? = items.last else {
                Issue.record("unexpected reply shape")
                return
            }
            #expect(daily["activityId"] == .string("daily"))
            #expect(daily["activityState"] == .string("completed"))
            #expect(daily["activityRunId"] == .string("1"))
            #expect(daily["activityVersion"] == .string("1.0"))
            #expect(daily["bookmarked"] == .bool(true))
            #expect(daily["activityRun"] == .object(["total": .number(10), "completed": .number(1), "missed": .number(0)]))
            for key in ["activityStartDate", "activityEndDate", "anchorDateVersion", "anchorDatecreatedDate", "lastModifiedDate",
                        "customScheduleRuns", "activityRun"] {
                #expect(daily[key] != nil, "\(key) missing")
            }
            #expect(weekly["activityRun"] == .object(["total": .number(0), "completed": .number(0), "missed": .number(0)]))
            #expect(weekly["anchorDateVersion"] == .string("1.0"))
            #expect(weekly["customScheduleRuns"] == .array([.object([
                "runStartDate": .string("2027-01-11T09:00:00.000-0500"), "runEndDate": .string("2027-01-17T23:59:59.000-0500"),
            ])]))

            // Progress and a bookmark on the study; a replayed inProgress keeps the activities.
            #expect(try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEPWELL", "completion": 10, "adherence": 100],
                                                       ["studyId": "SLEEPWELL", "bookmarked": true],
                                                       ["studyId": "SLEEPWELL", "status": "inProgress", "participantId": token]]],
                auth: auth, userId: userId).status == .ok)
            state = try await h.call("studyState", method: .get, auth: auth, userId: userId)
            guard case .array(let after)? = state.json["studies"], case .object(let updated)? = after.first else {
                Issue.record("unexpected reply shape")
                return
            }
            #expect(updated["completion"] == .number(10) && updated["adherence"] == .number(100))
            #expect(updated["bookmarked"] == .bool(true))
            #expect(updated["enrolledDate"]?.text == enrolled)
            // The older names answer the same.
            let preferences = try await h.call("userPreferences", method: .get, auth: auth, userId: userId)
            #expect(preferences.json["studies"] == state.json["studies"])
            #expect(try await h.call(
                "updatePreferences", body: ["studies": [["studyId": "SLEEPWELL", "bookmarked": false]]], auth: auth, userId: userId
            ).status == .ok)
            #expect(try await h.call("activityState", method: .get, query: "studyId=SLEEPWELL", auth: auth, userId: userId)
                .json["activities"]?.arrayCount == 2)

            // Bad items change nothing.
            let invalid = try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEPWELL", "status": "Withdrawn"],
                                                       ["studyId": "SLEEPWELL", "status": "joined"]]],
                auth: auth, userId: userId)
            #expect(invalid.status == .badRequest)
            #expect(invalid.statusMessage == "Invalid study status joined.")
            state = try await h.call("studyState", method: .get, auth: auth, userId: userId)
            guard case .array(let unchanged)? = state.json["studies"], case .object(let same)? = unchanged.first else {
                Issue.record("unexpected reply shape")
                return
            }
            #expect(same["status"] == .string("inProgress"))
            #expect(try await h.call("updateActivityState", body: ["studyId": "SLEEPWELL", "activity": [["activityId": "daily", "activityState": "done"]]],
                                     auth: auth, userId: userId).status == .badRequest)
        }
    }

    /// The stale-replay rule as the store applies it (inside its upsert) agrees with the rule as
    /// `StudyStates.isFresher` states it, case by case.
    @Test func theStoreAppliesTheFreshnessRule() async throws {
        let cases: [(stored: (String, String), incoming: (String?, String?))] = [
            (("2", "completed"), ("1", "completed")), (("2", "completed"), ("3", "yetToJoin")),
            (("2", "completed"), ("2", "inProgress")), (("2", "inProgress"), ("2", "completed")),
            (("2", "inProgress"), ("2", "yetToJoin")), (("2", "abandoned"), ("2", "completed")),
            (("2", "completed"), (nil, "inProgress")), (("2", "completed"), ("2", nil)),
            (("x", "completed"), ("1", "inProgress")), (("10", "completed"), ("9", "inProgress")),
            (("9", "completed"), ("10", "inProgress")), (("2", "completed"), ("abc", "yetToJoin")),
        ]
        try await RegistrationHarness.run { h in
            let (userId, auth, _) = try await h.signUp("rule@example.org")
            for (index, test) in cases.enumerated() {
                let activityId = "a\(index)"
                func send(_ run: String?, _ state: String?, total: Int) async throws {
                    var item: [String: Any] = ["activityId": activityId, "activityVersion": "1.0",
                                               "activityRun": ["total": total, "completed": 0, "missed": 0]]
                    if let run { item["activityRunId"] = run }
                    if let state { item["activityState"] = state }
                    let reply = try await h.call(
                        "updateActivityState", body: ["studyId": "RULES", "activity": [item]], auth: auth, userId: userId)
                    #expect(reply.status == .ok)
                }
                try await send(test.stored.0, test.stored.1, total: 1)
                try await send(test.incoming.0, test.incoming.1, total: 2)
                let listed = try await h.call("activityState", method: .get, query: "studyId=RULES", auth: auth, userId: userId)
                guard case .array(let activities)? = listed.json["activities"],
                    let row = activities.first(where: { $0["activityId"]?.text == activityId })
                else {
                    Issue.record("no state for case \(index)")
                    continue
                }
                let expected = StudyStates.isFresher(runId: test.incoming.0, state: test.incoming.1, than: test.stored)
                #expect(row["activityRun"]?["total"] == .number(expected ? 2 : 1), "case \(index): \(test)")
            }
        }
    }

    @Test func oneParticipantCannotTouchAnothersState() async throws {
        try await RegistrationHarness.run(studies: ["S1"]) { h in
            let a = try await h.signUp("ned@example.org")
            let b = try await h.signUp("ola@example.org")
            _ = try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "S1", "status": "inProgress", "participantId": "p"]]],
                auth: b.auth, userId: b.userId)
            for (name, method) in [("studyState", "GET"), ("userProfile", "GET"), ("activityState", "GET")] {
                let reply = try await h.call(name, method: .init(method)!, query: "studyId=S1", auth: a.auth, userId: b.userId)
                #expect(reply.status == .forbidden, "\(name)")
            }
            let write = try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "S1", "status": "Withdrawn"]]], auth: a.auth, userId: b.userId)
            #expect(write.status == .forbidden)
            // B's consent, profile, activities and account are out of A's reach too.
            let pdf = Data("%PDF-1.4\n% B's signature\n%%EOF\n".utf8).base64EncodedString()
            #expect(try await h.call(
                "updateEligibilityConsentStatus",
                body: ["studyId": "S1", "eligibility": true, "consent": ["version": "1.0", "status": "completed", "pdf": pdf],
                       "sharing": "true"], auth: b.auth, userId: b.userId).status == .ok)
            let attempts: [(String, HTTPRequest.Method, [String: Any]?, String?)] = [
                ("consentPDF", .get, nil, "studyId=S1&consentVersion="),
                ("updateEligibilityConsentStatus", .post,
                 ["studyId": "S1", "eligibility": true, "consent": ["version": "2.0", "status": "completed", "pdf": pdf],
                  "sharing": "false"], nil),
                ("updateUserProfile", .post, ["settings": ["remoteNotifications": false]], nil),
                ("updateActivityState", .post,
                 ["studyId": "S1", "activity": [["activityId": "x", "activityRunId": "1", "activityState": "completed"]]], nil),
                ("withdraw", .delete, ["studyId": "S1", "deleteData": true], nil),
                ("deactivate", .delete, ["deleteData": ["S1"]], nil),
                ("logout", .delete, ["reason": "user_action"], nil),
                ("changePassword", .post, ["currentPassword": "Passw0rd!", "newPassword": "Taken-0ver1"], nil),
            ]
            for (name, method, body, query) in attempts {
                let reply = try await h.call(name, method: method, body: body, query: query, auth: a.auth, userId: b.userId)
                #expect(reply.status == .forbidden, "\(name)")
            }
            let bState = try await h.call("studyState", method: .get, auth: b.auth, userId: b.userId)
            #expect(bState.json["studies"]?.arrayCount == 1)
            #expect(bState.json["studies"].flatMap { if case .array(let a) = $0 { a.first?["status"]?.text } else { nil } } == "inProgress")
            let bConsent = try await h.call("consentPDF", method: .get, query: "studyId=S1&consentVersion=", auth: b.auth, userId: b.userId)
            #expect(bConsent.json["consent"]?["version"]?.text == "1.0")
            #expect(try await h.call("userProfile", method: .get, auth: b.auth, userId: b.userId).status == .ok)
            #expect(try await h.call("studyState", method: .get, auth: a.auth, userId: a.userId).json["studies"] == .array([]))
        }
    }
}

extension JSONValue {
    var arrayCount: Int? {
        if case .array(let value) = self { return value.count }
        return nil
    }
}
