import Foundation
import HTTPTypes
import StudyModels
import Testing
import TestSupport

/// The registration admin API's app accounts: listed with their state for a super-admin only;
/// disabled (signed out everywhere, no sign-in), enabled, unlocked, sent a new verification code.
@Suite(.needsCluster) struct RegistrationAccountAdminTests {
    static let users = "/admin/v1/apps/DEMOAPP/users"

    func list(_ h: RegistrationHarness, _ query: String = "", token: String) async throws -> AppUserList {
        let reply = try await h.admin(.get, Self.users + query, token: token)
        #expect(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(AppUserList.self, from: reply.body)
    }

    func user(_ h: RegistrationHarness, _ path: String, token: String) async throws -> AppUserList.User {
        let reply = try await h.admin(.post, path, token: token)
        #expect(reply.status == .ok, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
        return try JSONDecoder.iso8601.decode(AppUserList.User.self, from: reply.body)
    }

    @Test func aSuperAdminListsTheAppsAccountsWithTheirState() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let ann = try await h.signUp("ann@example.org")
            try await h.join("SLEEPWELL", auth: ann.auth, userId: ann.userId)
            #expect(try await h.call("register", body: ["emailId": "bob@example.org", "password": "Passw0rd!"]).status == .ok)
            _ = try await h.signUp("cleo@example.org")
            for attempt in 1...5 {
                _ = try await h.call("login", body: ["emailId": "cleo@example.org", "password": "Wrong-\(attempt)"])
            }

            let all = try await list(h, token: team.root)
            try #require(all.users.count == 3)
            #expect(all.next == nil)
            let byEmail = Dictionary(uniqueKeysWithValues: all.users.map { ($0.email, $0) })
            let annListed = try #require(byEmail["ann@example.org"])
            #expect(annListed.userId == ann.userId)
            #expect(annListed.account == AccountState(verified: true, lockedUntil: nil, disabledAt: nil))
            #expect(annListed.studies == [AppUserList.Study(studyId: "SLEEPWELL", status: "inProgress")])
            #expect(annListed.lastSignInAt != nil)
            #expect(byEmail["bob@example.org"]?.account.verified == false)
            #expect(byEmail["cleo@example.org"]?.account.lockedUntil != nil)
            #expect(try await h.auditActors("app_users.identities_read") == ["root@studystack.test"])

            #expect(try await list(h, "?state=unverified", token: team.root).users.map(\.email) == ["bob@example.org"])
            #expect(try await list(h, "?state=locked", token: team.root).users.map(\.email) == ["cleo@example.org"])
            #expect(try await list(h, "?q=ANN%40", token: team.root).users.map(\.email) == ["ann@example.org"])
            #expect(try await list(h, "?state=disabled", token: team.root).users.isEmpty)
            let first = try await list(h, "?limit=2", token: team.root)
            #expect(first.users.count == 2)
            let rest = try await list(h, "?limit=2&after=\(try #require(first.next))", token: team.root)
            #expect((first.users + rest.users).map(\.userId) == all.users.map(\.userId))

            // The lockout lifts on request, and the account signs in again.
            let cleo = try #require(byEmail["cleo@example.org"])
            let unlocked = try await user(h, "\(Self.users)/\(cleo.userId)/unlock", token: team.root)
            #expect(unlocked.account.lockedUntil == nil)
            #expect(try await h.call("login", body: ["emailId": "cleo@example.org", "password": "Passw0rd!"]).status == .ok)
            #expect(try await h.auditActors("account.unlocked") == ["root@studystack.test"])
        }
    }

    @Test func aDisabledAccountIsSignedOutEverywhereAndCannotSignInUntilEnabled() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let dan = try await h.signUp("dan@example.org")
            let disabled = try await user(h, "\(Self.users)/\(dan.userId)/disable", token: team.root)
            #expect(disabled.account.disabledAt != nil)
            #expect(try await h.auditActors("account.disabled") == ["root@studystack.test"])
            // Asking again changes nothing and records nothing.
            #expect(try await user(h, "\(Self.users)/\(dan.userId)/disable", token: team.root).account.disabledAt == disabled.account.disabledAt)
            #expect(try await h.auditActors("account.disabled").count == 1)

            #expect(try await h.call("userProfile", method: .get, auth: dan.auth, userId: dan.userId).status == .unauthorized)
            #expect(try await h.call("refreshToken", body: ["refreshToken": dan.refresh], auth: dan.auth).status == .forbidden)
            let login = try await h.call("login", body: ["emailId": "dan@example.org", "password": "Passw0rd!"])
            #expect(login.status == .unauthorized)
            #expect(login.statusMessage == "Your account has been deactivated. Please contact the study team.")
            #expect(login.string("auth") == nil)
            // A wrong password is answered as for any account: the state is told only to its owner.
            let guess = try await h.call("login", body: ["emailId": "dan@example.org", "password": "Wrong-1"])
            #expect(guess.statusMessage == "Invalid username or password.")
            // Password help queues nothing for a disabled account.
            let queued = try await h.count("SELECT count(*)::int FROM mail_outbox")
            #expect(try await h.call("forgotPassword", body: ["emailId": "dan@example.org"]).status == .ok)
            #expect(try await h.count("SELECT count(*)::int FROM mail_outbox") == queued)
            #expect(try await list(h, "?state=disabled", token: team.root).users.map(\.email) == ["dan@example.org"])

            let enabled = try await user(h, "\(Self.users)/\(dan.userId)/enable", token: team.root)
            #expect(enabled.account.disabledAt == nil)
            #expect(try await h.auditActors("account.enabled") == ["root@studystack.test"])
            let again = try await h.call("login", body: ["emailId": "dan@example.org", "password": "Passw0rd!"])
            #expect(again.status == .ok)
            let auth = try #require(again.string("auth"))
            #expect(try await h.call("userProfile", method: .get, auth: auth, userId: dan.userId).status == .ok)
        }
    }

    @Test func anAdminSendsANewVerificationCodeThatVerifiesTheAccount() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let registered = try await h.call("register", body: ["emailId": "eve@example.org", "password": "Passw0rd!"])
            let userId = try #require(registered.string("userId"))
            _ = try await h.mail(to: "eve@example.org")
            let path = "\(Self.users)/\(userId)/verification-email"
            #expect(try await h.admin(.post, path, token: team.root).status == .accepted)
            let mail = try await h.mail(to: "eve@example.org", after: 1)
            let code = try #require(h.secret(in: mail))
            #expect(try await h.auditActors("participant.code_resent") == ["root@studystack.test"])
            // At most two a minute per account, however many admins ask.
            #expect(try await h.admin(.post, path, token: team.root).status == .accepted)
            #expect(try await h.admin(.post, path, token: team.root).status == .tooManyRequests)
            _ = try await h.mail(to: "eve@example.org", after: 2)
            #expect(try h.mails().filter { $0.contains("To: eve@example.org\r\n") }.count == 3)
            // The newest code is the one that verifies; the one before it no longer does.
            let newest = try #require(h.secret(in: try await h.mail(to: "eve@example.org", after: 2)))
            if newest != code {
                #expect(try await h.call("verify", body: ["emailId": "eve@example.org", "code": code], auth: registered.string("auth")).status
                    == .badRequest)
            }
            #expect(try await h.call("verify", body: ["emailId": "eve@example.org", "code": newest], auth: registered.string("auth")).status
                == .ok)

            // A verified or disabled account gets no code.
            let ann = try await h.signUp("ann@example.org")
            #expect(try await h.admin(.post, "\(Self.users)/\(ann.userId)/verification-email", token: team.root).status == .conflict)
            let ivy = try await h.call("register", body: ["emailId": "ivy@example.org", "password": "Passw0rd!"])
            let ivyId = try #require(ivy.string("userId"))
            _ = try await user(h, "\(Self.users)/\(ivyId)/disable", token: team.root)
            #expect(try await h.admin(.post, "\(Self.users)/\(ivyId)/verification-email", token: team.root).status == .conflict)
            #expect(try await h.auditActors("participant.code_resent").count == 2)
        }
    }

    @Test func onlyASuperAdminReachesAccountsAndBadInputChangesNothing() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let ann = try await h.signUp("ann@example.org")
            try await h.join("SLEEPWELL", auth: ann.auth, userId: ann.userId)
            let account = "\(Self.users)/\(ann.userId)"
            let routes: [(HTTPRequest.Method, String)] = [
                (.get, Self.users), (.get, account), (.post, "\(account)/disable"), (.post, "\(account)/enable"),
                (.post, "\(account)/unlock"), (.post, "\(account)/verification-email"),
            ]
            try #require(routes.count == 6)
            for (method, path) in routes {
                // A viewer of a study the account joined is still not an admin of the account.
                #expect(try await h.admin(method, path, token: team.viewer).status == .forbidden, "\(path)")
                #expect(try await h.admin(method, path, token: team.stranger).status == .forbidden, "\(path)")
                #expect(try await h.admin(method, path, token: nil).status == .unauthorized, "\(path)")
                #expect(try await h.admin(method, path, token: "forged").status == .unauthorized, "\(path)")
            }
            // Another app's path does not reach the account; nor does a malformed id.
            for path in ["/admin/v1/apps/OTHERAPP/users/\(ann.userId)/disable", "\(Self.users)/\(UUID().uuidString)/disable",
                         "\(Self.users)/not-an-id/disable"] {
                #expect(try await h.admin(.post, path, token: team.root).status == .notFound, "\(path)")
            }
            for bad in ["?state=banned", "?limit=0", "?limit=501", "?after=nope", "?q=" + String(repeating: "a", count: 101)] {
                #expect(try await h.admin(.get, Self.users + bad, token: team.root).status == .badRequest, "\(bad)")
            }
            #expect(try await h.auditActors("account.disabled").isEmpty)
            #expect(try await h.auditActors("app_users.identities_read").isEmpty)
            #expect(try await h.call("userProfile", method: .get, auth: ann.auth, userId: ann.userId).status == .ok)
        }
    }
}
