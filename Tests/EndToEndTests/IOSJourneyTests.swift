import Foundation
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Journeys J0 to J11 (docs/compatibility.md), in order, as the 2020 MyStudies iOS app
/// makes them against the three real services: its headers and encodings, the 401 → refresh →
/// replay flow, offline replays, and every field the app reads (most of them force-unwrapped or
/// force-cast in the app, so a missing one would crash it).
@Suite(.needsCluster) struct IOSJourneyTests {
    static let password = "Journey-Passw0rd!"
    static let bundleId = "org.studystack.mystudies"
    static let apnsToken = String(repeating: "5e", count: 32)

    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, the pattern the app parses WCP and registration dates with.
    static func isWireDate(_ text: String?) -> Bool {
        text?.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}/) != nil
    }

    /// A signed consent as the app renders it: a PDF, base64.
    static let consentPDF = Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% signed by the journey\n%%EOF\n".utf8)

    @Test func j0ToJ11AsTheIOSAppMakesThem() async throws {
        try await Platform.run { platform in
            let app = platform.app(.ios)
            let email = "ios-journey@example.org"

            // J0: every launch.
            let version = try await app.wcp("versionInfo")
            #expect(version.status == 200)
            #expect(version.json?["ios"]?["latestVersion"]?.string == "1.0")
            #expect(version.json?["ios"]?["forceUpdate"]?.string == "false")

            // J1: browse anonymously.
            let list = try await app.wcp("studyList")
            let study = try #require(list.json?["studies"]?.array?.first { $0["studyId"]?.string == "DEMOSTUDY" })
            for field in ["studyId", "studyVersion", "title", "category", "sponsorName", "tagline", "logo"] {
                #expect(study[field]?.string != nil, "studies[].\(field)")
            }
            #expect(study["status"]?.string == "Active")
            #expect(study["settings"]?["enrolling"]?.bool == true)
            #expect(study["settings"]?["rejoin"]?.bool == true)
            let listedVersion = try #require(study["studyVersion"]?.string)
            let updates = try await app.wcp("studyUpdates", [("studyId", "DEMOSTUDY"), ("studyVersion", listedVersion)])
            #expect(updates.json?["currentVersion"]?.string == listedVersion)
            for flag in ["consent", "activities", "resources", "info"] {
                #expect(updates.json?["updates"]?[flag]?.bool == false, "updates.\(flag)")
            }
            #expect(updates.json?["updates"]?["status"]?.string == "Active")
            let info = try await app.wcp("studyInfo", [("studyId", "DEMOSTUDY")])
            #expect(info.json?["info"]?.array?.isEmpty == false)
            #expect(info.json?["withdrawalConfig"]?["type"]?.string == "ask_user")
            let document = try await app.wcp("consentDocument", [("studyId", "DEMOSTUDY"), ("consentVersion", "")])
            #expect(document.json?["consent"]?["type"]?.string == "text/html")
            #expect(document.json?["consent"]?["content"]?.string?.isEmpty == false)

            // J2: sign up, verify, settings and the APNs token.
            let registered = try await app.registration("register", body: ["emailId": email, "password": Self.password, "appId": Self.bundleId])
            #expect(registered.status == 200, "\(registered.text)")
            for field in ["userId", "auth", "refreshToken"] { #expect(registered.json?[field]?.string != nil, "register.\(field)") }
            #expect(registered.json?["verified"]?.bool == false)
            app.signedIn(registered)
            #expect(try await app.registration("resendConfirmation", body: ["emailId": email]).status == 200)
            let code = try await platform.verificationCode(for: email, afterMessages: 2)
            let verified = try await app.registration("verify", body: ["code": code, "emailId": email])
            // The calls so far and the codes mailed, should this fail.
            let mailed = try Platform.codes(in: platform.mailDirectory, to: email)
            #expect(verified.status == 200, "code \(code) of \(mailed); calls \(app.session.trace)")
            #expect(verified.json?["message"]?.string == "success")
            let variantA: [String: Any] = [
                "settings": ["remoteNotifications": true, "touchId": false, "passcode": true, "localNotifications": true,
                             "reminderLeadTime": "00:00", "locale": ""],
                "info": ["appVersion": "1.0.1", "os": "ios", "deviceToken": Self.bundleId], "participantInfo": [Any](),
            ]
            #expect(try await app.registration("updateUserProfile", body: variantA).status == 200)
            let variantB: [String: Any] = ["info": ["appVersion": "1.0.1", "os": "ios", "deviceToken": Self.apnsToken], "participantInfo": [Any]()]
            #expect(try await app.registration("updateUserProfile", body: variantB).status == 200)
            let noStudies = try await app.registration("studyState", method: .GET)
            #expect(noStudies.json?["studies"]?.array?.isEmpty == true)

            // J3: log in again; a 401 makes the app refresh and replay (a GET carries the
            // leftover refresh body in its query string).
            let login = try await app.registration("login", body: ["emailId": email, "password": Self.password, "appId": Self.bundleId])
            #expect(login.status == 200)
            #expect(login.json?["verified"]?.bool == true)
            #expect(login.json?["resetPassword"]?.bool == false)
            app.signedIn(login)
            try await platform.expireAuth(app)
            let profile = try await app.registration("userProfile", method: .GET)
            #expect(profile.status == 200, "\(profile.text)")
            #expect(profile.json?["profile"]?["emailId"]?.string == email)
            let settings = try #require(profile.json?["settings"]?.object)
            #expect(settings["passcode"]?.bool == true)
            #expect(settings["reminderLeadTime"]?.string == "00:00")
            #expect(Array(app.session.trace.suffix(3)) == ["U userProfile 401", "U refreshToken 200", "U userProfile 200"])
            // A wrong password is 401 and the app then refreshes with an empty token: 400.
            let wrong = try await platform.app(.ios).registration("login", body: ["emailId": email, "password": "Wrong-Passw0rd!"])
            #expect(wrong.status == 400)

            // J4: enroll with a token.
            let consent = try await app.wcp("eligibilityConsent", [("studyId", "DEMOSTUDY")])
            #expect(consent.json?["eligibility"]?["type"]?.string == "token")
            let consentVersion = try #require(consent.json?["consent"]?["version"]?.string)
            #expect(consent.json?["consent"]?["comprehension"]?["questions"]?.array?.isEmpty == false)
            #expect(consent.json?["consent"]?["sharing"]?["allowWithoutSharing"]?.bool == true)
            let token = platform.tokens[0]
            let valid = try await app.response("validateEnrollmentToken", [("studyId", "DEMOSTUDY"), ("token", token)])
            #expect(valid.status == 200, "\(valid.text)")
            #expect(valid.json?["success"]?.bool == true)
            let enrolled = try await app.response("enroll", [("studyId", "DEMOSTUDY"), ("token", token), ("allowDataSharing", "true")])
            let participant = try #require(enrolled.json?["data"]?["appToken"]?.string)
            #expect(participant.count == 32)
            let joined = try await app.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": participant]]])
            #expect(joined.status == 200)
            let pdf = Self.consentPDF.base64EncodedString()
            let signed = try await app.registration(
                "updateEligibilityConsentStatus",
                body: ["studyId": "DEMOSTUDY", "eligibility": true,
                       "consent": ["version": consentVersion, "status": "completed", "pdf": pdf], "sharing": "true"],
                explicitAuth: true)
            #expect(signed.status == 200, "\(signed.text)")
            let states = try await app.registration("studyState", method: .GET)
            let state = try #require(states.json?["studies"]?.array?.first)
            #expect(state["status"]?.string == "inProgress")
            #expect(state["participantId"]?.string == participant)
            #expect(Self.isWireDate(state["enrolledDate"]?.string), "\(state)")
            // The token is spent.
            let again = try await app.response("validateEnrollmentToken", [("studyId", "DEMOSTUDY"), ("token", token)])
            #expect(again.json?["exception"]?.string == "Token already in use")

            // J5: the activity list, its anchor queries, dashboard and resources.
            let activityStates = try await app.registration("activityState", method: .GET, query: [("studyId", "DEMOSTUDY")])
            #expect(activityStates.status == 200)
            let activities = try #require(try await app.wcp("activityList", [("studyId", "DEMOSTUDY")]).json?["activities"]?.array)
            #expect(Set(activities.compactMap { $0["activityId"]?.string }) == ["daily", "weekly", "kicks"])
            for activity in activities {
                for field in ["activityId", "activityVersion", "title", "type", "startTime", "endTime", "state", "schedulingType"] {
                    #expect(activity[field]?.string != nil, "\(activity["activityId"]?.string ?? "?").\(field)")
                }
                #expect(activity["frequency"]?["type"]?.string != nil)
            }
            let weekly = try #require(activities.first { $0["activityId"]?.string == "weekly" })
            #expect(weekly["schedulingType"]?.string == "AnchorDate")
            #expect(weekly["anchorDate"]?["sourceType"]?.string == "EnrollmentDate")
            #expect(activities.first { $0["activityId"]?.string == "kicks" }?["type"]?.string == "task")
            let dashboard = try await app.wcp("studyDashboard", [("studyId", "DEMOSTUDY")])
            let statistics = try #require(dashboard.json?["dashboard"]?["statistics"]?.array)
            let charts = try #require(dashboard.json?["dashboard"]?["charts"]?.array)
            #expect(!statistics.isEmpty && !charts.isEmpty)
            let resources = try #require(try await app.wcp("resources", [("studyId", "DEMOSTUDY")]).json?["resources"]?.array)
            #expect(resources.contains { $0["resourcesId"]?.string == "protocol" })

            // J6: take the daily check-in, and the kick counter.
            let dailyVersion = try #require(activities.first { $0["activityId"]?.string == "daily" }?["activityVersion"]?.string)
            let runState: [String: Any] = [
                "studyId": "DEMOSTUDY",
                "activity": [["activityId": "daily", "activityRunId": "1", "activityState": "inProgress", "activityVersion": dailyVersion,
                              "activityRun": ["total": 2, "completed": 0, "missed": 0]]],
            ]
            #expect(try await app.registration("updateActivityState", body: runState).status == 200)
            let design = try await app.wcp("activity", [("studyId", "DEMOSTUDY"), ("activityId", "daily"), ("activityVersion", dailyVersion)])
            let metadataName = try #require(design.json?["activity"]?["metadata"]?["name"]?.string)
            let steps = try #require(design.json?["activity"]?["steps"]?.array)
            #expect(steps.count == 17)
            let submission = JourneyResponses.dailyResponse(participant: participant, name: metadataName, version: dailyVersion)
            let submitted = try await app.processResponse(submission)
            #expect(submitted.status == 200, "\(submitted.text)")
            #expect(submitted.json?["success"]?.bool == true)
            var completed = runState
            completed["activity"] = [["activityId": "daily", "activityRunId": "1", "activityState": "completed",
                                      "activityVersion": dailyVersion, "activityRun": ["total": 2, "completed": 1, "missed": 0]]]
            #expect(try await app.registration("updateActivityState", body: completed).status == 200)
            #expect(try await app.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "completion": 50, "adherence": 100]]]).status == 200)
            let kicks = try JourneyResponses.kickResponse(participant: participant)
            #expect(try await app.processResponse(kicks).status == 200)
            // Offline replays of the same calls, delivered late: stored once, state unchanged.
            #expect(try await app.processResponse(submission).status == 200)
            #expect(try await app.registration("updateActivityState", body: runState).status == 200)
            let stateAfter = try await app.registration("activityState", method: .GET, query: [("studyId", "DEMOSTUDY")])
            let daily = try #require(stateAfter.json?["activities"]?.array?.first { $0["activityId"]?.string == "daily" })
            #expect(daily["activityState"]?.string == "completed")
            #expect(daily["activityRun"]?["completed"]?.number == 1)
            #expect(daily["activityRunId"]?.string == "1")

            // Stored into the study's tables in the background: both processed, the replay not again.
            let processed = try await eventually {
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.allSatisfy({ $0["status"]?.string != "pending" }) && !responses.isEmpty ? responses : nil
            }
            #expect(processed.map { $0["status"]?.string } == ["processed", "processed"], "\(processed)")

            // J7: the dashboard's queries, sequential, once per key.
            let rows = try await eventually {
                let reply = try await app.executeSQL(participantId: participant, "SELECT sleepQuality,Created FROM daily")
                return reply.json?["rows"]?.array.flatMap { $0.isEmpty ? nil : $0 }
            }
            #expect(rows.count == 1, "the replayed response is stored once")
            #expect(rows.first?["data"]?["sleepQuality"]?["value"]?.number == 7)
            let created = rows.first?["data"]?["Created"]?["value"]?.string
            #expect(created?.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}/) != nil, "\(created ?? "nil")")
            let severity = try await app.executeSQL(participantId: participant, "SELECT severity,Created FROM dailysymptoms")
            #expect(severity.json?["rows"]?.array?.compactMap { $0["data"]?["severity"]?["value"]?.number }.sorted() == [2, 4])
            let kickRows = try await eventually {
                try await app.executeSQL(participantId: participant, "SELECT \"count\",duration,Created FROM kickscounter")
                    .json?["rows"]?.array.flatMap { $0.isEmpty ? nil : $0 }
            }
            #expect(kickRows.first?["data"]?["count"]?["value"]?.number == 33)

            // J8: resources and the consent PDF as signed.
            let stored = try await app.registration("consentPDF", method: .GET, query: [("studyId", "DEMOSTUDY"), ("consentVersion", "")])
            #expect(stored.json?["consent"]?["type"]?.string == "application/pdf")
            #expect(stored.json?["consent"]?["content"]?.string.flatMap { Data(base64Encoded: $0) } == Self.consentPDF)
            #expect(stored.json?["consent"]?["version"]?.string == consentVersion)

            // J9: leave the study, keeping nothing.
            let left = try await app.response("withdrawFromStudy", [("participantId", participant), ("delete", "1")])
            #expect(left.status == 200, "\(left.text)")
            #expect(try await app.registration("withdraw", method: .DELETE, body: ["studyId": "DEMOSTUDY", "deleteData": true]).status == 200)
            let withdrawn = try await app.registration("studyState", method: .GET)
            #expect(withdrawn.json?["studies"]?.array?.first?["status"]?.string == "Withdrawn")
            let gone = try await app.executeSQL(participantId: participant, "SELECT sleepQuality FROM daily")
            #expect(gone.json?["exception"]?.string != nil, "a withdrawn participant's token names no one")
            let late = try await app.processResponse(submission)
            #expect(late.status == 400)

            // J11: log out; the session is over.
            #expect(try await app.registration("logout", method: .DELETE, body: ["reason": "user_action"]).status == 200)
            let after = try await platform.app(.ios).registration(
                "userProfile", method: .GET, userId: false)
            #expect(after.status == 400 || after.status == 401)
            let stale = try await Wire.send(
                .GET, platform.registration.baseURL + "/fdahpUserRegWS/userProfile.api",
                headers: [("applicationId", "DEMOAPP"), ("orgId", "DEMOORG"), ("auth", app.session.auth ?? ""), ("userId", app.session.userId ?? "")])
            #expect(stale.status == 401)
            #expect(stale.header("StatusMessage") == "Session expired.")

            // J10: a second participant joins, then deletes the account.
            let second = platform.app(.ios)
            let other = "ios-leaver@example.org"
            second.signedIn(try await second.registration("register", body: ["emailId": other, "password": Self.password]))
            _ = try await second.registration("verify", body: ["code": try await platform.verificationCode(for: other), "emailId": other])
            let secondToken = try #require(try await second.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[1]), ("allowDataSharing", "false")]
            ).json?["data"]?["appToken"]?.string)
            _ = try await second.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": secondToken]]])
            #expect(try await second.response("withdrawFromStudy", [("participantId", secondToken), ("delete", "0")]).status == 200)
            let deactivated = try await second.registration("deactivate", method: .DELETE, body: ["deleteData": ["DEMOSTUDY"]], explicitAuth: true)
            #expect(deactivated.status == 200, "\(deactivated.text)")
            let noAccount = try await platform.app(.ios).registration("login", body: ["emailId": other, "password": Self.password])
            #expect(noAccount.status != 200)
        }
    }

}
