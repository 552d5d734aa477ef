import Foundation
import HTTPTypes
import Logging
import Synchronization
import StudyModels
import Testing
import TestSupport

/// The 2019-2020 MyStudies iOS app's registration client:
/// `applicationId`, `orgId` and the `auth` it holds on every call, per-call headers on top,
/// pretty-printed JSON bodies, DELETE with a body, and on a 401 the refresh-and-replay with its
/// quirks: only the new `auth` is kept (the first refresh token stays in use), and the replay
/// re-sends the refresh body (as the query string of a GET).
final class IOSRegistrationClient: Sendable {
    struct State {
        var auth: String?
        var refreshToken: String?
        var userId: String?
        /// Every call made, in order, with its status (the journey as the server saw it).
        var trace: [(String, HTTPResponse.Status)] = []
    }

    let h: RegistrationHarness
    let state = Mutex(State())

    init(_ h: RegistrationHarness) { self.h = h }

    var auth: String? { state.withLock { $0.auth } }
    var refreshToken: String? { state.withLock { $0.refreshToken } }
    var userId: String? { state.withLock { $0.userId } }
    var trace: [(String, HTTPResponse.Status)] { state.withLock { $0.trace } }

    func call(
        _ name: String, method: HTTPRequest.Method = .post, body: [String: Any]? = nil, query: String? = nil,
        explicitAuth: String? = nil, sendsUserId: Bool = true
    ) async throws -> RegistrationHarness.Reply {
        let userId = sendsUserId ? self.userId : nil
        let reply = try await h.call(name, method: method, body: body, query: query, auth: explicitAuth ?? auth, userId: userId)
        record(name, reply.status)
        guard reply.status == .unauthorized else { return reply }
        // §1.5: no refresh token and not login → a local "session expired"; otherwise refresh.
        guard refreshToken != nil || name == "login" else { return reply }
        let stored = refreshToken ?? ""
        let refreshBody = ["refreshToken": stored]
        let refreshed = try await h.call("refreshToken", body: refreshBody, auth: auth)
        record("refreshToken", refreshed.status)
        guard refreshed.status == .ok, let newAuth = refreshed.string("auth") else { return refreshed }
        state.withLock { $0.auth = newAuth }  // the iOS app keeps its stored refresh token
        let replayQuery = method == .get ? [query, "refreshToken=\(stored)"].compactMap { $0 }.joined(separator: "&") : query
        let replay = try await h.call(
            name, method: method, body: method == .get ? nil : refreshBody, query: replayQuery,
            auth: explicitAuth ?? newAuth, userId: userId)
        record(name, replay.status)
        return replay
    }

    private func record(_ name: String, _ status: HTTPResponse.Status) {
        state.withLock { $0.trace.append((name, status)) }
    }

    func signedIn(_ reply: RegistrationHarness.Reply) {
        state.withLock {
            $0.auth = reply.string("auth")
            $0.refreshToken = reply.string("refreshToken")
            $0.userId = reply.string("userId")
        }
    }

    func expireAuth() async throws {
        try await h.sql("UPDATE participant_sessions SET auth_expires_at = now() - interval '1 second' WHERE auth_hash = \(SecureTokenHash.of(auth ?? ""))")
    }
}

/// Journeys J2, J3, J4 steps 5-7, J6's state updates, J9, J10 and J11 (docs/compatibility.md)
/// replayed call by call as the apps make them, checking every field the apps read.
@Suite(.needsCluster) struct RegistrationJourneyTests {
    static let bundleId = "org.studystack.mystudies"
    static let apnsToken = String(repeating: "5f", count: 32)
    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, the pattern the apps parse dates with.
    static func isWireDate(_ text: String?) -> Bool {
        text?.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}/#) != nil
    }

    /// J2 through verification and the first profile calls; returns a signed-in client.
    func signUp(_ h: RegistrationHarness, _ email: String, password: String = "Passw0rd!") async throws -> IOSRegistrationClient {
        let app = IOSRegistrationClient(h)
        let registered = try await app.call(
            "register", body: ["emailId": email, "password": password, "appId": Self.bundleId], sendsUserId: false)
        #expect(registered.status == .ok)
        #expect(registered.string("message") == "success")
        // All four are force-unwrapped by the app.
        #expect(registered.string("userId").flatMap(UUID.init(uuidString:)) != nil)
        #expect(registered.json["verified"] == .bool(false))
        #expect(registered.string("auth")?.isEmpty == false)
        #expect(registered.string("refreshToken")?.isEmpty == false)
        app.signedIn(registered)
        let code = try #require(h.secret(in: try await h.mail(to: email)))
        #expect(try await app.call("verify", body: ["code": code, "emailId": email], sendsUserId: false).status == .ok)
        return app
    }

    @Test func j2SignUpVerifyAndRegisterTheDevice() async throws {
        try await RegistrationHarness.run { h in
            let app = IOSRegistrationClient(h)
            let registered = try await app.call(
                "register", body: ["emailId": "j2@example.org", "password": "Passw0rd!", "appId": Self.bundleId],
                sendsUserId: false)
            #expect(registered.status == .ok)
            app.signedIn(registered)
            // The user asks for the code again: the first one no longer works.
            let first = try #require(h.secret(in: try await h.mail(to: "j2@example.org")))
            #expect(try await app.call("resendConfirmation", body: ["emailId": "j2@example.org"], sendsUserId: false).status == .ok)
            let second = try #require(h.secret(in: try await h.mail(to: "j2@example.org", after: 1)))
            let stale = try await app.call("verify", body: ["code": first, "emailId": "j2@example.org"], sendsUserId: false)
            #expect(stale.status == .badRequest)
            #expect(stale.statusCode == "102")
            #expect(try await app.call("verify", body: ["code": second, "emailId": "j2@example.org"], sendsUserId: false).status == .ok)
            let again = try await app.call("verify", body: ["code": second, "emailId": "j2@example.org"], sendsUserId: false)
            #expect(again.status == .forbidden)

            // Variant A (the settings, with the bundle id where the token goes), then variant B.
            let variantA: [String: Any] = [
                "settings": [
                    "remoteNotifications": true, "touchId": false, "passcode": true, "localNotifications": true,
                    "reminderLeadTime": "00:00", "locale": "",
                ],
                "info": ["appVersion": "1.0.12", "os": "ios", "deviceToken": Self.bundleId],
                "participantInfo": [Any](),
            ]
            #expect(try await app.call("updateUserProfile", body: variantA).status == .ok)
            let variantB: [String: Any] = [
                "info": ["appVersion": "1.0.12", "os": "ios", "deviceToken": Self.apnsToken], "participantInfo": [Any](),
            ]
            #expect(try await app.call("updateUserProfile", body: variantB).status == .ok)
            let rows = try await h.postgres.query(
                "SELECT device_token, device_os FROM participant_sessions WHERE revoked_at IS NULL", logger: Logger(label: "test"))
            let devices = try await rows.decode((String?, String?).self).collect()
            try #require(devices.count == 1)
            for (token, os) in devices {
                #expect(token == Self.apnsToken)
                #expect(os == "ios")
            }

            let state = try await app.call("studyState", method: .get)
            #expect(state.status == .ok)
            #expect(state.json["studies"] == .array([]))
            let profile = try await app.call("userProfile", method: .get)
            #expect(profile.json["profile"]?["emailId"]?.text == "j2@example.org")
            let settings = try #require(profile.json["settings"])
            #expect(settings["remoteNotifications"] == .bool(true))
            #expect(settings["passcode"] == .bool(true))
            #expect(settings["touchId"] == .bool(false))
            #expect(settings["localNotifications"] == .bool(true))
            #expect(settings["reminderLeadTime"]?.text == "00:00")
            #expect(settings["locale"]?.text == "")
            #expect(app.trace.allSatisfy { $0.1 == .ok || $0.0 == "verify" })
        }
    }

    @Test func j3LoginWrongPasswordAndTheRefreshAndReplayFlow() async throws {
        try await RegistrationHarness.run { h in
            _ = try await signUp(h, "j3@example.org")
            let app = IOSRegistrationClient(h)

            // A wrong password is a 401 from login; with no refresh token held the app still tries
            // to refresh, with an empty one, and shows the 400 "Invalid input." it gets.
            let wrong = try await app.call(
                "login", body: ["emailId": "j3@example.org", "password": "Wrong-pass1", "appId": Self.bundleId],
                sendsUserId: false)
            #expect(wrong.status == .badRequest)
            #expect(wrong.statusMessage == "Invalid input.")
            #expect(app.trace.map(\.1) == [.unauthorized, .badRequest])

            let login = try await app.call(
                "login", body: ["emailId": "j3@example.org", "password": "Passw0rd!", "appId": Self.bundleId],
                sendsUserId: false)
            #expect(login.status == .ok)
            #expect(login.json["verified"] == .bool(true))
            #expect(login.json["resetPassword"] == .bool(false))
            #expect(login.string("auth")?.isEmpty == false)
            app.signedIn(login)
            #expect(try await app.call("userProfile", method: .get).json["profile"]?["emailId"]?.text == "j3@example.org")
            #expect(try await app.call("studyState", method: .get).status == .ok)
            #expect(try await app.call("updateUserProfile", body: [
                "info": ["appVersion": "1.0.12", "os": "ios", "deviceToken": Self.apnsToken], "participantInfo": [Any](),
            ]).status == .ok)

            // Half an hour later the key has expired: 401, refresh, replay (a GET with the refresh
            // body in its query string) succeeds.
            try await app.expireAuth()
            let firstKey = app.auth
            let profile = try await app.call("userProfile", method: .get)
            #expect(profile.status == .ok)
            #expect(profile.json["profile"]?["emailId"]?.text == "j3@example.org")
            #expect(app.auth != firstKey)
            // An hour later again, with the same first refresh token (the iOS app never stores the
            // rotated one) and the key the last refresh gave: still accepted.
            try await app.expireAuth()
            let state = try await app.call("studyState", method: .get)
            #expect(state.status == .ok)
            // A POST replay re-sends the refresh body: refused as invalid input, not a failure.
            try await app.expireAuth()
            let replayed = try await app.call("updateStudyState", body: ["studies": [["studyId": "S1", "bookmarked": true]]])
            #expect(replayed.status == .badRequest)
            #expect(app.trace.suffix(3).map(\.1) == [.unauthorized, .ok, .badRequest])

            // Someone holding a copy of that first refresh token but not the newest key: refused,
            // and the device's session is revoked.
            let leaked = try await h.call("refreshToken", body: ["refreshToken": app.refreshToken ?? ""])
            #expect(leaked.status == .forbidden)
            #expect(leaked.statusCode == "103")
            #expect(try await h.call("studyState", method: .get, auth: app.auth, userId: app.userId).status == .unauthorized)
            let events = try await h.postgres.query(
                "SELECT count(*)::int FROM audit_events WHERE action = 'participant.refresh_token_reused'",
                logger: Logger(label: "test"))
            #expect((try await events.decode(Int.self).single()) == 1)
        }
    }

    @Test func j3AndroidKeepsTheRotatedRefreshTokenAndAReusedOneRevokes() async throws {
        try await RegistrationHarness.run { h in
            let (userId, _, _) = try await h.signUp("android@example.org")
            let login = try await h.call("login", body: ["emailId": "android@example.org", "password": "Passw0rd!"])
            var refresh = try #require(login.string("refreshToken"))
            let first = refresh
            for _ in 0..<3 {
                // Android sends the refresh call with applicationId and orgId only and stores both values.
                let refreshed = try await h.call("refreshToken", body: ["refreshToken": refresh])
                #expect(refreshed.status == .ok)
                #expect(refreshed.string("userId") == userId)
                refresh = try #require(refreshed.string("refreshToken"))
            }
            let reused = try await h.call("refreshToken", body: ["refreshToken": first])
            #expect(reused.status == .forbidden)
            #expect(try await h.call("refreshToken", body: ["refreshToken": refresh]).status == .forbidden)
        }
    }

    @Test func j3ForgottenPasswordTemporaryPasswordAndChange() async throws {
        try await RegistrationHarness.run { h in
            _ = try await signUp(h, "forgot@example.org")
            let app = IOSRegistrationClient(h)
            #expect(try await app.call("forgotPassword", body: ["emailId": "forgot@example.org"], sendsUserId: false).status == .ok)
            let temporary = try #require(h.secret(in: try await h.mail(to: "forgot@example.org", after: 1)))
            let login = try await app.call(
                "login", body: ["emailId": "forgot@example.org", "password": temporary, "appId": Self.bundleId],
                sendsUserId: false)
            #expect(login.status == .ok, "\(login.statusMessage ?? "") \(app.trace)")
            #expect(login.json["resetPassword"] == .bool(true))
            app.signedIn(login)
            // The change-password screen sends the temporary password it signed in with.
            let changed = try await app.call(
                "changePassword", body: ["currentPassword": temporary, "newPassword": "N3w-Passw0rd"])
            #expect(changed.status == .ok, "\(changed.statusMessage ?? "")")
            let spent = try await app.call(
                "changePassword", body: ["currentPassword": temporary, "newPassword": "Th1rd-Passw0rd"])
            #expect(spent.statusMessage == "Current password is invalid.")
            let again = try await h.call("login", body: ["emailId": "forgot@example.org", "password": "N3w-Passw0rd"])
            #expect(again.status == .ok)
            #expect(again.json["resetPassword"] == .bool(false))
            // The temporary password was single use.
            #expect(try await h.call("login", body: ["emailId": "forgot@example.org", "password": temporary]).status == .unauthorized)

            // An unverified account: 403, and the app opens its verification screen.
            _ = try await h.call("register", body: ["emailId": "unverified@example.org", "password": "Passw0rd!"])
            let unverified = try await h.call("forgotPassword", body: ["emailId": "unverified@example.org"])
            #expect(unverified.status == .forbidden)
            let notVerifiedLogin = try await h.call("login", body: ["emailId": "unverified@example.org", "password": "Passw0rd!"])
            #expect(notVerifiedLogin.status == .ok)
            #expect(notVerifiedLogin.json["verified"] == .bool(false))
        }
    }

    @Test func j4EnrollConsentAndJ6ActivityProgress() async throws {
        try await RegistrationHarness.run(studies: ["SLEEP"]) { h in
            let app = try await signUp(h, "j4@example.org")
            let appToken = String(repeating: "3c", count: 16)
            // J4.5: joined, with the response server's app token as participantId.
            #expect(try await app.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEP", "status": "inProgress", "participantId": appToken]]]
            ).status == .ok)
            // J4.6: the signed PDF, with `auth` passed explicitly as the app does for this call.
            let pdf = Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n".utf8)
            let consent = try await app.call(
                "updateEligibilityConsentStatus",
                body: [
                    "studyId": "SLEEP", "eligibility": true,
                    "consent": ["version": "1.0", "status": "completed", "pdf": pdf.base64EncodedString()],
                    "sharing": "true",
                ], explicitAuth: app.auth)
            #expect(consent.status == .ok)
            // J4.7: studyState for the enrolled date.
            let state = try await app.call("studyState", method: .get)
            let study = try #require(state.json["studies"].flatMap { if case .array(let a) = $0 { a.first } else { nil } })
            #expect(study["studyId"]?.text == "SLEEP")
            #expect(study["status"]?.text == "inProgress")
            #expect(study["participantId"]?.text == appToken)
            #expect(study["bookmarked"] == .bool(false))
            #expect(study["completion"] == .number(0))
            #expect(study["adherence"] == .number(0))
            let enrolled = try #require(study["enrolledDate"]?.text)
            #expect(Self.isWireDate(enrolled), "\(enrolled)")
            let pdfReply = try await app.call("consentPDF", method: .get, query: "studyId=SLEEP&consentVersion=")
            #expect(pdfReply.json["consent"]?["version"]?.text == "1.0")
            #expect(pdfReply.json["consent"]?["type"]?.text == "application/pdf")
            #expect(pdfReply.json["consent"]?["content"]?.text == pdf.base64EncodedString())
            #expect(pdfReply.json["sharing"]?.text == "true")

            // J6: the run starts, ends with its counts, and the study's progress follows.
            func run(_ state: String, completed: Int) -> [String: Any] {
                ["studyId": "SLEEP", "activity": [[
                    "activityId": "daily", "activityRunId": "1", "activityState": state, "activityVersion": "1.0",
                    "activityRun": ["total": 7, "completed": completed, "missed": 0],
                ]]]
            }
            #expect(try await app.call("updateActivityState", body: run("inProgress", completed: 0)).status == .ok)
            #expect(try await app.call("updateActivityState", body: run("completed", completed: 1)).status == .ok)
            #expect(try await app.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEP", "completion": 14, "adherence": 100]]]).status == .ok)
            // The offline queue replays the older inProgress update later: ignored.
            #expect(try await app.call("updateActivityState", body: run("inProgress", completed: 0)).status == .ok)

            let activities = try await app.call("activityState", method: .get, query: "studyId=SLEEP")
            let activity = try #require(activities.json["activities"].flatMap { if case .array(let a) = $0 { a.first } else { nil } })
            #expect(activity["activityId"]?.text == "daily")
            #expect(activity["activityVersion"]?.text == "1.0")
            #expect(activity["activityState"]?.text == "completed")
            #expect(activity["activityRunId"]?.text == "1")
            #expect(activity["bookmarked"] == .bool(false))
            for key in ["activityStartDate", "activityEndDate", "anchorDateVersion", "anchorDatecreatedDate"] {
                #expect(activity[key]?.text == "", "\(key)")
            }
            #expect(Self.isWireDate(activity["lastModifiedDate"]?.text))
            #expect(activity["customScheduleRuns"] == .array([]))
            #expect(activity["activityRun"]?["total"] == .number(7))
            #expect(activity["activityRun"]?["completed"] == .number(1))
            #expect(activity["activityRun"]?["missed"] == .number(0))
            let progress = try await app.call("studyState", method: .get)
            let updated = try #require(progress.json["studies"].flatMap { if case .array(let a) = $0 { a.first } else { nil } })
            #expect(updated["completion"] == .number(14))
            #expect(updated["adherence"] == .number(100))
            #expect(updated["enrolledDate"]?.text == enrolled)
        }
    }

    @Test func j9WithdrawJ10DeleteAccountJ11Logout() async throws {
        try await RegistrationHarness.run { h in
            // J9: withdraw with deletion.
            let leaving = try await signUp(h, "j9@example.org")
            #expect(try await leaving.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEP", "status": "inProgress", "participantId": "p1"]]]
            ).status == .ok)
            let withdrawn = try await leaving.call("withdraw", method: .delete, body: ["studyId": "SLEEP", "deleteData": true])
            #expect(withdrawn.status == .ok)
            let state = try await leaving.call("studyState", method: .get)
            let study = try #require(state.json["studies"].flatMap { if case .array(let a) = $0 { a.first } else { nil } })
            #expect(study["status"]?.text == "Withdrawn")
            #expect(study["participantId"]?.text == "")
            let twice = try await leaving.call("withdraw", method: .delete, body: ["studyId": "SLEEP", "deleteData": true])
            #expect(twice.status == .badRequest)
            #expect(twice.statusMessage == "You are already Withdrawn from study")

            // J10: delete the account, naming the joined studies; nothing of it can sign in after.
            let deleting = try await signUp(h, "j10@example.org")
            #expect(try await deleting.call(
                "updateStudyState", body: ["studies": [["studyId": "SLEEP", "status": "inProgress", "participantId": "p2"]]]
            ).status == .ok)
            let deleted = try await deleting.call(
                "deactivate", method: .delete, body: ["deleteData": ["SLEEP"]], explicitAuth: deleting.auth)
            #expect(deleted.status == .ok)
            #expect(try await h.call("login", body: ["emailId": "j10@example.org", "password": "Passw0rd!"]).status == .unauthorized)
            #expect(try await h.call("refreshToken", body: ["refreshToken": deleting.refreshToken ?? ""]).status == .forbidden)

            // J11: logout ends this device's session; its refresh token is dead too.
            let out = try await leaving.call("logout", method: .delete, body: ["reason": "user_action"])
            #expect(out.status == .ok)
            #expect(out.string("message") == "success")
            #expect(try await h.call("studyState", method: .get, auth: leaving.auth, userId: leaving.userId).status == .unauthorized)
            #expect(try await h.call("refreshToken", body: ["refreshToken": leaving.refreshToken ?? ""]).status == .forbidden)
        }
    }
}
