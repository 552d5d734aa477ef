import Foundation
import HTTPTypes
import Testing
import TestSupport

/// Participant secrets under attack: every try at a password, a verification code or the current
/// password is counted before it is checked, and nothing but a success clears the count.
@Suite(.needsCluster) struct ParticipantSignInAttackTests {
    static let locked = "Your account is locked"

    @Test func aPasswordResetDoesNotClearTheCountOfWrongPasswords() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.signUp("reset@example.org")
            for round in 0..<3 {
                for attempt in 1...2 {
                    let wrong = try await h.call("login", body: ["emailId": "reset@example.org", "password": "Wrong-pass\(round)\(attempt)"])
                    #expect(wrong.statusMessage == "Invalid username or password.", "round \(round), try \(attempt)")
                }
                // The review's loop: four wrong, a reset, repeated, never locked.
                #expect(try await h.call("forgotPassword", body: ["emailId": "reset@example.org"]).status == .ok)
                if round == 1 { break }
            }
            // Four wrong so far across two resets: the fifth locks.
            let fifth = try await h.call("login", body: ["emailId": "reset@example.org", "password": "Wrong-pass-last"])
            #expect(fifth.statusMessage?.hasPrefix(Self.locked) == true, "\(fifth.statusMessage ?? "")")
            #expect(try await h.call("login", body: ["emailId": "reset@example.org", "password": "Passw0rd!"])
                .statusMessage?.hasPrefix(Self.locked) == true)
        }
    }

    @Test func twentyWrongPasswordsSentTogetherCheckAtMostFive() async throws {
        try await RegistrationHarness.run(overrides: ["rateLimit.perMinute": "1000"]) { h in
            _ = try await h.signUp("burst@example.org")
            let messages = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await h.call("login", body: ["emailId": "burst@example.org", "password": "Wrong-pass\(index)"]).statusMessage ?? ""
                    }
                }
                var all: [String] = []
                for try await message in group { all.append(message) }
                return all
            }
            try #require(messages.count == 20)
            let checked = messages.filter { $0 == "Invalid username or password." }.count
            #expect(checked <= 4, "\(checked) passwords were checked and answered as wrong")
            #expect(messages.filter { $0.hasPrefix(Self.locked) }.count == 20 - checked)
            #expect(try await h.call("login", body: ["emailId": "burst@example.org", "password": "Passw0rd!"])
                .statusMessage?.hasPrefix(Self.locked) == true)
        }
    }

    @Test func wrongVerificationCodesAreCountedAndLock() async throws {
        try await RegistrationHarness.run { h in
            _ = try await h.call("register", body: ["emailId": "codes@example.org", "password": "Passw0rd!"])
            let code = try #require(h.secret(in: try await h.mail(to: "codes@example.org")))
            for attempt in 1...5 {
                let wrong = try await h.call("verify", body: ["emailId": "codes@example.org", "code": "WRONG\(attempt)"])
                #expect(wrong.statusMessage == "Invalid code", "try \(attempt)")
            }
            // After five wrong codes the right one meets the lock, and the account stays unverified.
            let right = try await h.call("verify", body: ["emailId": "codes@example.org", "code": code])
            #expect(right.statusMessage?.hasPrefix(Self.locked) == true)
            let rows = try await h.postgres.query(
                "SELECT verified FROM participants WHERE email = 'codes@example.org'", logger: .init(label: "test"))
            var verified: [Bool] = []
            for try await value in rows.decode(Bool.self) { verified.append(value) }
            #expect(verified == [false])
        }
    }

    @Test func wrongCurrentPasswordsInChangePasswordAreCountedAndLock() async throws {
        try await RegistrationHarness.run { h in
            let user = try await h.signUp("change@example.org")
            for attempt in 1...4 {
                let wrong = try await h.call(
                    "changePassword", body: ["currentPassword": "Nope-123\(attempt)", "newPassword": "N3w-passw0rd"],
                    auth: user.auth, userId: user.userId)
                #expect(wrong.statusMessage == "Current password is invalid.", "try \(attempt)")
            }
            _ = try await h.call(
                "changePassword", body: ["currentPassword": "Nope-1235", "newPassword": "N3w-passw0rd"],
                auth: user.auth, userId: user.userId)
            let right = try await h.call(
                "changePassword", body: ["currentPassword": "Passw0rd!", "newPassword": "N3w-passw0rd"],
                auth: user.auth, userId: user.userId)
            #expect(right.statusMessage?.hasPrefix(Self.locked) == true, "\(right.statusMessage ?? "")")
            // The password did not change.
            #expect(try await h.call("login", body: ["emailId": "change@example.org", "password": "Passw0rd!"]).status == .ok)
        }
    }
}
