import Foundation
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// The Android app's variants, a study update published while a
/// participant is in the study, and notifications from study-metadata reaching the registration
/// service's push outbox for the right devices, all across the three real executables.
@Suite(.needsCluster) struct PlatformJourneyTests {
    static let password = "Platform-Passw0rd!"
    static let fcmToken = "fcm-device:" + String(repeating: "Ab9_", count: 30)
    static let apnsToken = String(repeating: "7c", count: 32)

    /// Signs up, verifies and logs in `email` on `app`, then sends its push token.
    func signUp(_ app: MyStudiesApp, _ email: String, platform: Platform, deviceToken: String?) async throws {
        let registered = try await app.registration("register", body: ["emailId": email, "password": Self.password])
        #expect(registered.status == 200, "\(registered.text)")
        app.signedIn(registered)
        let code = try await platform.verificationCode(for: email)
        #expect(try await app.registration("verify", body: ["code": code, "emailId": email]).status == 200)
        app.signedIn(try await app.registration("login", body: ["emailId": email, "password": Self.password]))
        if let deviceToken {
            // The settings screen after sign-up (push allowed), then the token the OS grants.
            let os = app.kind == .ios ? "ios" : "android"
            let settings: [String: Any] = [
                "settings": ["remoteNotifications": true, "localNotifications": true, "touchId": false, "passcode": false,
                             "reminderLeadTime": "00:00", "locale": ""],
                "info": ["appVersion": "1.0", "os": os, "deviceToken": ""], "participantInfo": [Any](),
            ]
            #expect(try await app.registration("updateUserProfile", body: settings).status == 200)
            let info: [String: Any] = ["info": ["appVersion": "1.0", "os": os, "deviceToken": deviceToken], "participantInfo": [Any]()]
            #expect(try await app.registration("updateUserProfile", body: info).status == 200)
        }
    }

    @Test func theAndroidAppsVariantsWork() async throws {
        try await Platform.run { platform in try await androidJourney(platform) }
    }

    /// The same journey with every service behind PgBouncer in transaction pooling mode: no
    /// named prepared statement and no `LISTEN` survives it, so the services run their statements
    /// unnamed, queues poll, and caches do not trust themselves (docs/operations.md).
    @Test func theAndroidAppsVariantsWorkBehindPgBouncerInTransactionMode() async throws {
        try await Platform.run(throughPgBouncer: true) { platform in try await androidJourney(platform) }
    }

    func androidJourney(_ platform: Platform) async throws {
        let app = platform.app(.android)
        // The Basic credential ends with Android's line feed; the headers go to all three servers.
        let version = try await app.wcp("versionInfo")
        #expect(version.status == 200, "\(version.text)")
        #expect(version.json?["android"]?["latestVersion"]?.string == "1.0")
        #expect(version.json?["android"]?["forceUpdate"]?.string == "false")
        #expect(try await app.wcp("studyList").json?["studies"]?.array?.first?["status"]?.string == "Active")
        try await signUp(app, "android@example.org", platform: platform, deviceToken: Self.fcmToken)

        // validateEnrollmentToken in lower case and enroll, each with a JSON body and no
        // allowDataSharing, as the Android app sends them.
        let token = platform.tokens[5]
        let valid = try await app.response("validateenrollmenttoken", [("studyId", "DEMOSTUDY"), ("token", token)], jsonBody: true)
        #expect(valid.status == 200, "\(valid.text)")
        let enrolled = try await app.response("enroll", [("studyId", "DEMOSTUDY"), ("token", token)], jsonBody: true)
        #expect(enrolled.status == 200, "\(enrolled.text)")
        let participant = try #require(enrolled.json?["data"]?["appToken"]?.string)
        #expect(try await app.registration(
            "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": participant]]]
        ).status == 200)

        // updateActivityState items carry studyId and the string "false".
        let state: [String: Any] = [
            "studyId": "DEMOSTUDY",
            "activity": [["studyId": "DEMOSTUDY", "activityId": "kicks", "activityRunId": "1", "activityState": "inProgress",
                          "activityVersion": "1.0", "bookmarked": "false", "activityRun": ["total": 1, "completed": 0, "missed": 0]]],
        ]
        #expect(try await app.registration("updateActivityState", body: state).status == 200)

        // A 401: Android refreshes, keeps both the new auth and the new refresh token, and
        // replays the original request.
        let before = app.session
        try await platform.expireAuth(app)
        let states = try await app.registration("activityState", method: .GET, query: [("studyId", "DEMOSTUDY")])
        #expect(states.status == 200)
        let kicks = try #require(states.json?["activities"]?.array?.first { $0["activityId"]?.string == "kicks" })
        #expect(kicks["bookmarked"]?.bool == false)
        #expect(kicks["activityRun"]?["total"]?.number == 1)
        #expect(Array(app.session.trace.suffix(3)) == ["U activityState 401", "U refreshToken 200", "U activityState 200"])
        #expect(app.session.refreshToken != before.refreshToken && app.session.auth != before.auth)

        // The kick counter, submitted and read back with the app's headers.
        #expect(try await app.processResponse(try JourneyResponses.kickResponse(participant: participant)).status == 200)
        let rows = try await eventually {
            try await app.executeSQL(participantId: participant, "SELECT \"count\",duration,Created FROM kickscounter")
                .json?["rows"]?.array.flatMap { $0.isEmpty ? nil : $0 }
        }
        #expect(rows.first?["data"]?["duration"]?["value"]?.number == 200)

        // Leaving: the app's withdrawFromStudy URL lacks the prefix and .api (an Android bug);
        // it gets a 404 and the app goes on to the registration server.
        let misaddressed = try await Wire.send(
            .POST, platform.response.baseURL + "/withdrawFromStudy",
            headers: [("applicationId", "DEMOAPP"), ("orgId", "DEMOORG")], json: ["participantId": participant, "delete": false])
        #expect(misaddressed.status == 404)
        #expect(try await app.registration("withdraw", method: .DELETE, body: ["studyId": "DEMOSTUDY", "deleteData": false]).status == 200)
        let left = try await app.registration("studyState", method: .GET)
        #expect(left.json?["studies"]?.array?.first?["status"]?.string == "Withdrawn")

        // The exchanged refresh token, sent again without the session's key (a leaked copy),
        // is refused and ends the session: plain rotation, as Android gets it.
        let reuse = try await Wire.send(
            .POST, platform.registration.baseURL + "/fdahpUserRegWS/refreshToken.api",
            headers: [("applicationId", "DEMOAPP"), ("orgId", "DEMOORG")], json: ["refreshToken": before.refreshToken ?? ""])
        #expect(reuse.status == 403)
        let revoked = try await Wire.send(
            .GET, platform.registration.baseURL + "/fdahpUserRegWS/studyState.api",
            headers: [("applicationId", "DEMOAPP"), ("orgId", "DEMOORG"), ("auth", app.session.auth ?? ""),
                      ("userId", app.session.userId ?? "")])
        #expect(revoked.status == 401)
    }

    @Test func anUpdateAndNotificationsPublishedMidJourneyReachTheApps() async throws {
        try await Platform.run { platform in
            // Three devices: an enrolled iPhone, an Android phone that has not joined, and an
            // iPhone whose participant signed out.
            let enrolled = platform.app(.ios)
            try await signUp(enrolled, "enrolled@example.org", platform: platform, deviceToken: Self.apnsToken)
            let appToken = try #require(try await enrolled.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")]
            ).json?["data"]?["appToken"]?.string)
            #expect(try await enrolled.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": appToken]]]
            ).status == 200)
            let browsing = platform.app(.android)
            try await signUp(browsing, "browsing@example.org", platform: platform, deviceToken: Self.fcmToken)
            let gone = platform.app(.ios)
            try await signUp(gone, "gone@example.org", platform: platform, deviceToken: String(repeating: "9d", count: 32))
            #expect(try await gone.registration("logout", method: .DELETE, body: ["reason": "user_action"]).status == 200)

            // The team changes the weekly survey, adds a study announcement, and publishes.
            let admin = platform.admin
            let draft = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            var document = try #require(try JSONSerialization.jsonObject(with: draft.body) as? [String: Any])
            var activities = try #require(document["activities"] as? [[String: Any]])
            let weekly = try #require(activities.firstIndex { $0["activityId"] as? String == "weekly" })
            activities[weekly]["title"] = "Weekly survey (shorter)"
            document["activities"] = activities
            var notifications = document["notifications"] as? [[String: Any]] ?? []
            notifications.append(["notificationId": "weeklyChanged", "subtype": "Announcement",
                                  "text": "The weekly survey is shorter now.", "timing": "immediate"])
            document["notifications"] = notifications
            let saved = try await admin.send(.PUT, "/admin/v1/studies/DEMOSTUDY/draft", raw: try JSONSerialization.data(withJSONObject: document))
            #expect(saved.status == 200, "\(saved.text)")
            let published = try await admin.send(.POST, "/admin/v1/studies/DEMOSTUDY/publish-updates")
            #expect(published.status == 200, "\(published.text)")
            // And an announcement to everyone using the app.
            let announced = try await admin.send(.POST, "/admin/v1/apps/DEMOAPP/notifications", json: ["notificationId": "maintenance", "text": "Maintenance tonight."])
            #expect(announced.status == 201, "\(announced.text)")

            // The enrolled app, holding version 1.0, learns of the update and fetches what changed.
            let updates = try await enrolled.wcp("studyUpdates", [("studyId", "DEMOSTUDY"), ("studyVersion", "1.0")])
            #expect(updates.json?["currentVersion"]?.string == "1.1")
            #expect(updates.json?["updates"]?["activities"]?.bool == true)
            #expect(updates.json?["updates"]?["consent"]?.bool == false)
            #expect(try await enrolled.wcp("studyList").json?["studies"]?.array?.first?["studyVersion"]?.string == "1.1")
            let list = try #require(try await enrolled.wcp("activityList", [("studyId", "DEMOSTUDY")]).json?["activities"]?.array)
            let changed = try #require(list.first { $0["activityId"]?.string == "weekly" })
            #expect(changed["activityVersion"]?.string == "1.1")
            #expect(changed["title"]?.string == "Weekly survey (shorter)")
            #expect(list.first { $0["activityId"]?.string == "daily" }?["activityVersion"]?.string == "1.0")
            let design = try await enrolled.wcp("activity", [("studyId", "DEMOSTUDY"), ("activityId", "weekly"), ("activityVersion", "1.1")])
            #expect(design.json?["activity"]?["metadata"]?["version"]?.string == "1.1")
            // Notifications go out with study-metadata's next dispatch (every five seconds).
            let notices = try await eventually(within: .seconds(20)) { () -> [JSONValue]? in
                let list = try await enrolled.wcp("notifications", [("skip", "0")]).json?["notifications"]?.array ?? []
                let texts = list.compactMap { $0["message"]?.string }
                return texts.contains("The weekly survey is shorter now.") && texts.contains("Maintenance tonight.") ? list : nil
            }
            let studyNotice = try #require(notices.first { $0["message"]?.string == "The weekly survey is shorter now." })
            #expect(studyNotice["type"]?.string == "Study")
            #expect(studyNotice["studyId"]?.string == "DEMOSTUDY")
            #expect(notices.first { $0["message"]?.string == "Maintenance tonight." }?["type"]?.string == "Gateway")

            // study-metadata dispatches both to registration, which queues one push per device of
            // the audience: the study's to the enrolled iPhone only, the app's to both signed-in
            // devices, none to the signed-out one.
            let queued = try await eventually(within: .seconds(20)) { () -> [String: Set<String>]? in
                let rows = try await platform.withRegistrationDatabase { postgres, logger in
                    var rows: [(String, String)] = []
                    for try await row in try await postgres.query(
                        """
                        SELECT r.notification_id, p.device_token FROM push_outbox p
                        JOIN received_notifications r ON r.id = p.notification_id
                        """, logger: logger
                    ).decode((String, String).self) { rows.append(row) }
                    return rows
                }
                let byNotification = Dictionary(grouping: rows, by: \.0).mapValues { Set($0.map(\.1)) }
                return byNotification.keys.contains("weeklyChanged") && byNotification.keys.contains("maintenance") ? byNotification : nil
            }
            #expect(queued["weeklyChanged"] == [Self.apnsToken])
            #expect(queued["maintenance"] == [Self.apnsToken, Self.fcmToken])
        }
    }
}
