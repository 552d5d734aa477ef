import Foundation
import ServiceKit
import HTTPTypes
import Testing
import TestSupport

/// The account journeys (docs/compatibility.md): J2 (sign up and verify), J3 (login, the
/// wrong-password path, 401 → refreshToken → retry, forgot password), J11 (logout), and the
/// security rules that replace the original's weaknesses.
@Suite(.needsCluster) struct RegistrationAccountTests {
    @Test func signUpAndVerifyAsTheAppDoes() async throws {
        try await RegistrationHarness.run { h in
            let registered = try await h.call(
                "register", body: ["emailId": "ana@example.org", "password": "Passw0rd!", "appId": "org.example.app"])
            #expect(registered.status == .ok)
            #expect(registered.string("message") == "success")
            #expect(UUID(uuidString: registered.string("userId") ?? "") != nil)
            #expect(registered.json["verified"] == .bool(false))
            let auth = try #require(registered.string("auth"))
            let refresh = try #require(registered.string("refreshToken"))
            #expect(auth.count >= 43 && refresh.count >= 43 && auth != refresh)

            // The code arrives by e-mail: six characters from the CSPRNG.
            let mail = try await h.mail(to: "ana@example.org")
            let code = try #require(h.secret(in: mail))
            #expect(code.count == 6)
            #expect(mail.contains("48 hours"))

            let wrong = try await h.call("verify", body: ["emailId": "ana@example.org", "code": "AAAAAA"], auth: auth)
            #expect(wrong.status == .badRequest)
            #expect(wrong.statusMessage == "Invalid code")
            #expect(wrong.statusCode == "102")
            // Codes compare case-insensitively, as in the original.
            let verified = try await h.call("verify", body: ["emailId": "ana@example.org", "code": code.lowercased()], auth: auth)
            #expect(verified.status == .ok)
            #expect(verified.string("message") == "success")
            // Single use.
            let again = try await h.call("verify", body: ["emailId": "ana@example.org", "code": code], auth: auth)
            #expect(again.status == .forbidden)
            #expect(again.statusMessage == "User already verified")

            let confirmed = try await h.call(
                "confirmRegistration", method: .get, auth: auth, userId: registered.string("userId"))
            #expect(confirmed.json["verified"] == .bool(true))

            // The same e-mail again in this app is refused; in another app it is a new account.
            let duplicate = try await h.call("register", body: ["emailId": "ANA@example.org ", "password": "Passw0rd!"])
            #expect(duplicate.status == .badRequest)
            #expect(duplicate.statusMessage == "This email has already been used. Please try with different email address.")
            var other = RegistrationHarness.demoApp
            other.appId = "OTHERAPP"
            #expect(try await h.sendApp(other, revision: 1).0 == .ok)
            let otherApp = try await h.call(
                "register", body: ["emailId": "ana@example.org", "password": "Passw0rd!"], appId: "OTHERAPP")
            #expect(otherApp.status == .ok)
            // A refresh reports the account as it is: this one is not verified yet.
            let unverified = try await h.call(
                "refreshToken", body: ["refreshToken": otherApp.string("refreshToken") ?? ""], appId: "OTHERAPP")
            #expect(unverified.json["verified"] == .bool(false))
            #expect(otherApp.string("userId") != registered.string("userId"))
        }
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        try await RegistrationHarness.run { h in
            let weak = try await h.call("register", body: ["emailId": "bo@example.org", "password": "password"])
            #expect(weak.status == .badRequest)
            #expect(weak.statusMessage?.isEmpty == false)
            let notEmail = try await h.call("register", body: ["emailId": "not-an-email", "password": "Passw0rd!"])
            #expect(notEmail.statusMessage == "Please enter a valid email address.")
            let missing = try await h.call("register", body: ["emailId": "bo@example.org"])
            #expect(missing.statusMessage == "Invalid input.")
            // Without the app's headers nothing is looked at.
            let headerless = try await h.client.execute(
                uri: "/fdahpUserRegWS/login.api", method: .post, headers: [.contentType: "application/json"],
                body: .init(string: #"{"emailId":"bo@example.org","password":"Passw0rd!"}"#)) { $0.status }
            #expect(headerless == .badRequest)
            // A body that is not a JSON object is invalid input, not a server error.
            let garbage = try await h.client.execute(
                uri: "/fdahpUserRegWS/login.api", method: .post,
                headers: [HTTPField.Name("applicationId")!: "DEMOAPP", HTTPField.Name("orgId")!: "DEMOORG"],
                body: .init(string: "[1,2")) { $0.status }
            #expect(garbage == .badRequest)
            let rows = try await h.postgres.query("SELECT count(*)::int FROM participants", logger: .init(label: "t"))
            #expect((try await rows.decode(Int.self).single()) == 0)
            // Parameters may come in the query string (empty body), in any order.
            let queried = try await h.call("register", query: "password=Passw0rd!&emailId=bo@example.org")
            #expect(queried.status == .ok)
        }
    }

    @Test func loginRefreshAndLogoutFollowTheApp() async throws {
        try await RegistrationHarness.run { h in
            let (userId, _, _) = try await h.signUp("cy@example.org")
            let login = try await h.call("login", body: ["emailId": "cy@example.org", "password": "Passw0rd!", "appId": "x"])
            #expect(login.status == .ok)
            #expect(login.string("userId") == userId)
            #expect(login.json["verified"] == .bool(true))
            #expect(login.json["resetPassword"] == .bool(false))
            let auth = try #require(login.string("auth"))
            let refresh = try #require(login.string("refreshToken"))

            // A second phone signs in: both stay signed in.
            let phone2 = try await h.call("login", body: ["emailId": "cy@example.org", "password": "Passw0rd!"])
            let auth2 = try #require(phone2.string("auth"))
            #expect(try await h.call("confirmRegistration", method: .get, auth: auth, userId: userId).status == .ok)
            #expect(try await h.call("confirmRegistration", method: .get, auth: auth2, userId: userId).status == .ok)

            // The key expires: 401 "Session expired.", then the app refreshes and retries.
            try await h.sql("UPDATE participant_sessions SET auth_expires_at = now() - interval '1 second' WHERE auth_hash = \(SecureTokenHash.of(auth))")
            let expired = try await h.call("confirmRegistration", method: .get, auth: auth, userId: userId)
            #expect(expired.status == .unauthorized)
            #expect(expired.statusMessage == "Session expired.")
            #expect(expired.statusCode == "101")
            let refreshed = try await h.call("refreshToken", body: ["refreshToken": refresh], auth: auth)
            #expect(refreshed.status == .ok)
            let newAuth = try #require(refreshed.string("auth"))
            let newRefresh = try #require(refreshed.string("refreshToken"))
            #expect(newAuth != auth && newRefresh != refresh)
            #expect(refreshed.string("userId") == userId)
            #expect(refreshed.json["verified"] == .bool(true))
            #expect(try await h.call("confirmRegistration", method: .get, auth: newAuth, userId: userId).status == .ok)

            // The app's replay quirk (the refresh body sent again as a query) does not break anything.
            let quirk = try await h.call(
                "confirmRegistration", method: .get, query: "refreshToken=\(newRefresh)", auth: newAuth, userId: userId)
            #expect(quirk.status == .ok)

            // The old refresh token again: refused, and that device's session is revoked.
            let reused = try await h.call("refreshToken", body: ["refreshToken": refresh])
            #expect(reused.status == .forbidden)
            #expect(try await h.call("confirmRegistration", method: .get, auth: newAuth, userId: userId).status == .unauthorized)
            // The other phone is untouched.
            #expect(try await h.call("confirmRegistration", method: .get, auth: auth2, userId: userId).status == .ok)
            // An empty refresh token (the wrong-password quirk) is invalid input.
            #expect(try await h.call("refreshToken", body: ["refreshToken": ""]).statusMessage == "Invalid input.")

            // Logout is DELETE with a JSON body; other methods are refused.
            #expect(try await h.call("logout", method: .post, body: ["reason": "user_action"], auth: auth2, userId: userId)
                .status == .methodNotAllowed)
            let out = try await h.call("logout", method: .delete, body: ["reason": "user_action"], auth: auth2, userId: userId)
            #expect(out.status == .ok)
            #expect(out.string("message") == "success")
            #expect(try await h.call("confirmRegistration", method: .get, auth: auth2, userId: userId).status == .unauthorized)
        }
    }

    /// An account moved in from FDA MyStudies 2.x, its password hash as that server keeps it
    /// (wrapped in bcrypt, as the import writes it), signs in from the app with the same
    /// password. That sign-in stores the platform's own hash in the account and its history.
    @Test func aMyStudiesPasswordSignsInFromTheAppAndIsRehashed() async throws {
        try await RegistrationHarness.run { h in
            let (userId, _, _) = try await h.signUp("mo@example.org")
            // "Correct-Horse-7!" as that server hashes it, from Python's hashlib following its
            // `HashUtils.hash` (the same values as `PasswordHasherTests`).
            let salt =
                "8ac435d740047536024bc52aaf4be65c99fcf3357e01a1963ceedd012ab8ee6f7f95e133dd003caccc296696420e3873ce6ce2b4d26ce3ba005169d6f01e43e7"
            let digest =
                "7b93a8cff66e0a35396d9b7b85062032123ba542efc0c524550a5114e31959aa70c2affb8bfea6fd12b7ad92b664ecbaa441740ee39dfb95667b637bec07fe6d"
            let carried = try #require(try await PasswordHasher(cost: 4).wrapMyStudiesHash(digest: digest, salt: salt))
            try await h.sql("UPDATE participants SET password_hash = \(carried) WHERE user_id = \(UUID(uuidString: userId))")
            try await h.sql("UPDATE password_history SET password_hash = \(carried) WHERE user_id = \(UUID(uuidString: userId))")
            func stored() async throws -> Int {
                try await h.count("SELECT count(*) FROM participants WHERE user_id = \(UUID(uuidString: userId)) AND password_hash = \(carried)")
            }
            #expect(try await stored() == 1)
            #expect(try await h.call("login", body: ["emailId": "mo@example.org", "password": "Passw0rd!"]).status != .ok)
            #expect(try await stored() == 1, "a wrong password changes nothing")

            let login = try await h.call("login", body: ["emailId": "mo@example.org", "password": "Correct-Horse-7!"])
            #expect(login.status == .ok)
            #expect(login.string("userId") == userId)
            #expect(try await stored() == 0)
            #expect(
                try await h.count(
                    "SELECT count(*) FROM participants WHERE user_id = \(UUID(uuidString: userId)) AND password_hash LIKE '$2%'") == 1)
            #expect(
                try await h.count(
                    "SELECT count(*) FROM password_history WHERE user_id = \(UUID(uuidString: userId)) AND password_hash LIKE 'mystudies%'") == 0)
            #expect(try await h.auditActors("participant.password_rehashed") == [userId])
            #expect(try await h.call("login", body: ["emailId": "mo@example.org", "password": "Correct-Horse-7!"]).status == .ok)
            #expect(try await h.auditActors("participant.password_rehashed") == [userId], "rehashed once")
        }
    }

    @Test func wrongPasswordsLockTheAccount() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.signUp("di@example.org")
            // An unknown account and a wrong password look the same.
            let unknown = try await h.call("login", body: ["emailId": "nobody@example.org", "password": "Passw0rd!"])
            #expect(unknown.status == .unauthorized)
            #expect(unknown.statusMessage == "Invalid username or password.")
            for attempt in 1...4 {
                let wrong = try await h.call("login", body: ["emailId": "di@example.org", "password": "Wrong-pass\(attempt)"])
                #expect(wrong.statusMessage == "Invalid username or password.")
            }
            let fifth = try await h.call("login", body: ["emailId": "di@example.org", "password": "Wrong-pass5"])
            #expect(fifth.status == .unauthorized)
            #expect(fifth.statusMessage?.hasPrefix("Your account is locked") == true)
            // The sixth try is refused even with the right password, for 15 minutes.
            let sixth = try await h.call("login", body: ["emailId": "di@example.org", "password": "Passw0rd!"])
            #expect(sixth.statusMessage?.hasPrefix("Your account is locked") == true)
            try await h.sql("UPDATE attempt_counters SET locked_until = now() - interval '1 second'")
            #expect(try await h.call("login", body: ["emailId": "di@example.org", "password": "Passw0rd!"]).status == .ok)
        }
    }

    @Test func forgottenPasswordsTemporaryPasswordsAndHistory() async throws {
        try await RegistrationHarness.run { h in
            // Unverified: 403, the app opens its verification screen.
            _ = try await h.call("register", body: ["emailId": "ed@example.org", "password": "Passw0rd!"])
            let unverified = try await h.call("forgotPassword", body: ["emailId": "ed@example.org"])
            #expect(unverified.status == .forbidden)
            // An unknown address answers like a known one.
            #expect(try await h.call("forgotPassword", body: ["emailId": "nobody@example.org"]).status == .ok)

            let (userId, _, _) = try await h.signUp("fay@example.org")
            #expect(try await h.call("forgotPassword", body: ["emailId": "fay@example.org"]).status == .ok)
            let mail = try await h.mail(to: "fay@example.org", after: 1)
            let temporary = try #require(h.secret(in: mail))
            #expect(temporary.count == 10)

            // The temporary password signs in once, asking for a new password.
            let login = try await h.call("login", body: ["emailId": "fay@example.org", "password": temporary])
            #expect(login.json["resetPassword"] == .bool(true))
            let auth = try #require(login.string("auth"))
            #expect(try await h.call("login", body: ["emailId": "fay@example.org", "password": temporary]).status == .unauthorized)

            // Back to a recent password: refused. A new one: accepted, and the old one stops working.
            let reused = try await h.call(
                "changePassword", body: ["currentPassword": "Passw0rd!", "newPassword": "Passw0rd!"], auth: auth, userId: userId)
            #expect(reused.status == .badRequest)
            #expect(reused.statusMessage == "The new password must differ from your last 10 passwords.")
            let wrongCurrent = try await h.call(
                "changePassword", body: ["currentPassword": "Nope-1234", "newPassword": "N3w-passw0rd"], auth: auth, userId: userId)
            #expect(wrongCurrent.statusMessage == "Current password is invalid.")
            let changed = try await h.call(
                "changePassword", body: ["currentPassword": "Passw0rd!", "newPassword": "N3w-passw0rd"], auth: auth, userId: userId)
            #expect(changed.status == .ok)
            #expect(try await h.call("login", body: ["emailId": "fay@example.org", "password": "Passw0rd!"]).status == .unauthorized)
            #expect(try await h.call("login", body: ["emailId": "fay@example.org", "password": "N3w-passw0rd"]).status == .ok)

            // An expired temporary password is refused; so is a 91-day-old password flagged.
            #expect(try await h.call("forgotPassword", body: ["emailId": "fay@example.org"]).status == .ok)
            let second = try #require(h.secret(in: try await h.mail(to: "fay@example.org", after: 2)))
            try await h.sql("UPDATE participants SET temp_password_expires_at = now() - interval '1 second'")
            #expect(try await h.call("login", body: ["emailId": "fay@example.org", "password": second]).status == .unauthorized)
            try await h.sql("UPDATE participants SET password_changed_at = now() - interval '91 days'")
            let old = try await h.call("login", body: ["emailId": "fay@example.org", "password": "N3w-passw0rd"])
            #expect(old.json["resetPassword"] == .bool(true))
        }
    }

    @Test func anExpiredCodeIsRefused() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.call("register", body: ["emailId": "gil@example.org", "password": "Passw0rd!"])
            let code = try #require(h.secret(in: try await h.mail(to: "gil@example.org")))
            try await h.sql("UPDATE participants SET code_expires_at = now() - interval '1 second'")
            let expired = try await h.call("verify", body: ["emailId": "gil@example.org", "code": code])
            #expect(expired.status == .forbidden)
            #expect(expired.statusMessage == "Code Expired")
            // A new code works, and the old one is dead.
            #expect(try await h.call("resendConfirmation", body: ["emailId": "gil@example.org"]).status == .ok)
            let fresh = try #require(h.secret(in: try await h.mail(to: "gil@example.org", after: 1)))
            #expect(fresh != code, "the second mail carries a new code")
            #expect(try await h.call("verify", body: ["emailId": "gil@example.org", "code": code]).status == .badRequest)
            let verified = try await h.call("verify", body: ["emailId": "gil@example.org", "code": fresh])
            #expect(verified.status == .ok, "\(verified.statusMessage ?? "") \(fresh) \(code)")
        }
    }

    @Test func aSessionIsBoundToItsUserAndApp() async throws {
        try await RegistrationHarness.run { h in
            let a = try await h.signUp("hal@example.org")
            let b = try await h.signUp("ivy@example.org")
            // A's key naming B is refused, and B's account is untouched.
            let crossed = try await h.call(
                "changePassword", body: ["currentPassword": "Passw0rd!", "newPassword": "Taken-0ver!"], auth: a.auth, userId: b.userId)
            #expect(crossed.status == .forbidden)
            #expect(try await h.call("login", body: ["emailId": "ivy@example.org", "password": "Passw0rd!"]).status == .ok)
            #expect(try await h.call("confirmRegistration", method: .get, auth: a.auth, userId: b.userId).status == .forbidden)
            // The key in another app's headers is refused too.
            #expect(try await h.call("confirmRegistration", method: .get, auth: a.auth, userId: a.userId, appId: "OTHERAPP")
                .status == .forbidden)
            #expect(try await h.call("confirmRegistration", method: .get, auth: "made-up", userId: a.userId).status == .unauthorized)
        }
    }

    @Test func overLimitClientsAreRefused() async throws {
        try await RegistrationHarness.run(overrides: ["rateLimit.perMinute": "3"]) { h in
            for _ in 1...3 {
                #expect(try await h.call("login", body: ["emailId": "x@example.org", "password": "Passw0rd!"]).status == .unauthorized)
            }
            let limited = try await h.call("login", body: ["emailId": "x@example.org", "password": "Passw0rd!"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "60")
            // Each action counts on its own.
            #expect(try await h.call("forgotPassword", body: ["emailId": "x@example.org"]).status == .ok)
        }
    }

    @Test func noSecretReachesTheLogs() async throws {
        try await RegistrationHarness.run { h in
            let (userId, auth, refresh) = try await h.signUp("jo@example.org", password: "S3cret-Passw0rd")
            _ = try await h.call("login", body: ["emailId": "jo@example.org", "password": "Wr0ng-Passw0rd"])
            _ = try await h.call("forgotPassword", body: ["emailId": "jo@example.org"])
            let temporary = try #require(h.secret(in: try await h.mail(to: "jo@example.org", after: 1)))
            // The app's replay quirk puts the refresh token in a query string.
            _ = try await h.call("confirmRegistration", method: .get, query: "refreshToken=\(refresh)", auth: auth, userId: userId)
            _ = try await h.call("refreshToken", body: ["refreshToken": refresh])
            _ = try await h.call("logout", method: .delete, body: ["reason": "user_action"], auth: auth, userId: userId)
            let lines = h.logs.lines.withLock { $0 }
            #expect(!lines.isEmpty)
            let everything = lines.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            for secret in ["S3cret-Passw0rd", "Wr0ng-Passw0rd", temporary, auth, refresh] {
                #expect(!everything.contains(secret), "a secret reached the logs")
            }
            // The e-mail at rest is sealed, and erased once sent.
            let rows = try await h.postgres.query(
                "SELECT count(*)::int FROM mail_outbox WHERE sealed_message IS NOT NULL AND sent_at IS NOT NULL",
                logger: .init(label: "t"))
            #expect((try await rows.decode(Int.self).single()) == 0)
        }
    }
}
