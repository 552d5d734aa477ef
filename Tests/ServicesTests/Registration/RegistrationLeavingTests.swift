import Foundation
import Logging
import StudyModels
import Testing
import TestSupport

/// J9 (leave a study) and J10 (delete the account), as the apps send them.
@Suite(.needsCluster) struct RegistrationLeavingTests {
    @Test func withdrawingKeepsOrDeletesTheStudyData() async throws {
        try await RegistrationHarness.run { h in
            let (userId, auth, _) = try await h.signUp("pia@example.org")
            for study in ["KEEP", "DROP"] {
                _ = try await h.call(
                    "updateStudyState", body: ["studies": [["studyId": study, "status": "inProgress", "participantId": "p-\(study)"]]],
                    auth: auth, userId: userId)
                _ = try await h.call(
                    "updateActivityState",
                    body: ["studyId": study, "activity": [["activityId": "a", "activityRunId": "1", "activityState": "completed"]]],
                    auth: auth, userId: userId)
            }
            // DELETE with a JSON body; other methods refused.
            #expect(try await h.call("withdraw", method: .post, body: ["studyId": "KEEP", "deleteData": false], auth: auth, userId: userId)
                .status == .methodNotAllowed)
            #expect(try await h.call("withdraw", method: .delete, body: ["studyId": "KEEP", "deleteData": false], auth: auth, userId: userId)
                .status == .ok)
            #expect(try await h.call("withdraw", method: .delete, body: ["studyId": "DROP", "deleteData": true], auth: auth, userId: userId)
                .status == .ok)
            let again = try await h.call("withdraw", method: .delete, body: ["studyId": "KEEP", "deleteData": false], auth: auth, userId: userId)
            #expect(again.status == .badRequest)
            #expect(again.statusMessage == "You are already Withdrawn from study")

            let state = try await h.call("studyState", method: .get, auth: auth, userId: userId)
            guard case .array(let studies)? = state.json["studies"] else {
                Issue.record("unexpected reply shape")
                return
            }
            let byId = Dictionary(uniqueKeysWithValues: studies.compactMap { $0.object }.map { ($0["studyId"]?.text ?? "", $0) })
            #expect(byId["KEEP"]?["status"] == .string("Withdrawn"))
            #expect(byId["KEEP"]?["participantId"] == .string("p-KEEP"))
            #expect(byId["DROP"]?["status"] == .string("Withdrawn"))
            #expect(byId["DROP"]?["participantId"] == .string(""))
            // When each withdrew, for the study's admins.
            let withdrawnAt = try await h.postgres.query(
                "SELECT count(*)::int FROM participant_studies WHERE status = 'Withdrawn' AND withdrawn_at IS NOT NULL",
                logger: Logger(label: "test"))
            var counts: [Int] = []
            for try await count in withdrawnAt.decode(Int.self) { counts.append(count) }
            #expect(counts == [2])
            #expect(try await h.call("activityState", method: .get, query: "studyId=KEEP", auth: auth, userId: userId)
                .json["activities"]?.arrayCount == 1)
            #expect(try await h.call("activityState", method: .get, query: "studyId=DROP", auth: auth, userId: userId)
                .json["activities"]?.arrayCount == 0)
            // Rejoining is a new participation.
            #expect(try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "DROP", "status": "inProgress", "participantId": "p2"]]],
                auth: auth, userId: userId).status == .ok)
        }
    }

    @Test func deactivatingDeletesTheAccountAndEverySession() async throws {
        try await RegistrationHarness.run { h in
            let (userId, auth, refresh) = try await h.signUp("quinn@example.org")
            let other = try await h.call("login", body: ["emailId": "quinn@example.org", "password": "Passw0rd!"])
            _ = try await h.call(
                "updateStudyState", body: ["studies": [["studyId": "S1", "status": "inProgress", "participantId": "p"]]],
                auth: auth, userId: userId)
            let bystander = try await h.signUp("rae@example.org")

            // The apps send `auth` and `userId` explicitly, DELETE with the studies to withdraw.
            let deactivated = try await h.call(
                "deactivate", method: .delete, body: ["deleteData": ["S1"]], auth: auth, userId: userId)
            #expect(deactivated.status == .ok)
            #expect(deactivated.string("message") == "success")
            // Every device is signed out; the refresh token is dead; the e-mail is free again.
            #expect(try await h.call("studyState", method: .get, auth: auth, userId: userId).status == .unauthorized)
            #expect(try await h.call("studyState", method: .get, auth: other.string("auth"), userId: userId).status == .unauthorized)
            #expect(try await h.call("refreshToken", body: ["refreshToken": refresh]).status == .forbidden)
            #expect(try await h.call("login", body: ["emailId": "quinn@example.org", "password": "Passw0rd!"]).status == .unauthorized)
            let rows = try await h.postgres.query(
                "SELECT (SELECT count(*) FROM participants)::int, (SELECT count(*) FROM participant_sessions)::int, (SELECT count(*) FROM mail_outbox WHERE recipient = 'quinn@example.org')::int",
                logger: .init(label: "t"))
            let (participants, sessions, mails) = try await rows.decode((Int, Int, Int).self).single()
            #expect(participants == 1)
            #expect(sessions == 1)
            #expect(mails == 0)
            #expect(try await h.call("register", body: ["emailId": "quinn@example.org", "password": "Passw0rd!"]).status == .ok)
            // The bystander is untouched.
            #expect(try await h.call("studyState", method: .get, auth: bystander.auth, userId: bystander.userId).status == .ok)
            let audit = try await h.postgres.query(
                "SELECT action FROM audit_events WHERE actor = \(userId) ORDER BY id", logger: .init(label: "t"))
            var actions: [String] = []
            for try await action in audit.decode(String.self) { actions.append(action) }
            #expect(actions.suffix(2) == ["participant.withdrew", "participant.deactivated"])
        }
    }
}
