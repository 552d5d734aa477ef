import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// Sites and invitations on registration's admin API, with the response service making and
/// checking the tokens: invited by CSV (all or nothing), mailed with a QR code, enrolled with,
/// revoked, resent, counted per site.
@Suite(.needsCluster) struct InvitationTests {
    static let invitations = "/admin/v1/studies/SLEEPWELL/invitations"

    @Test func threeInvitedByCSVEachGetTheirOwnTokenByMailWithItsQRCode() async throws {
        try await InvitationFixture.run { f in
            let north = try await f.createSite("North Clinic")
            _ = try await f.createSite("South Clinic")
            let csv = """
                email,site,surgeryDate
                ann@example.org,North Clinic,2026-11-02
                bob@example.org,\(north.siteId),
                cleo@example.org,,

                """
            let (status, imported, text) = try await f.importCSV(csv)
            #expect(status == .created, "\(text)")
            #expect(imported?.invited == 3)
            #expect(imported?.invitations.map(\.email) == ["ann@example.org", "bob@example.org", "cleo@example.org"])
            #expect(imported?.invitations.map(\.siteName) == ["North Clinic", "North Clinic", nil])
            #expect(imported?.invitations.allSatisfy { $0.state == "invited" && $0.sentCount == 1 } == true)

            var tokens: [String] = []
            for email in ["ann@example.org", "bob@example.org", "cleo@example.org"] {
                let mail = try await f.invitationMail(to: email)
                #expect(mail.text.contains("You are invited to take part in the study Sleep Well."))
                #expect(mail.qr == [mail.token], "the QR code holds exactly the token")
                tokens.append(mail.token)
            }
            #expect(Set(tokens).count == 3)
            // Each token is known to the response service, with Ann's property.
            let (_, validated, _) = try await f.response.call(
                "mobileappstudy-validateEnrollmentToken.api", json: ["studyId": "SLEEPWELL", "token": tokens[0]])
            #expect(validated["success"] == .bool(true), "\(validated)")
            #expect("\(validated)".contains("2026-11-02"))

            let sites = try await f.sites()
            try #require(sites.sites.count == 2)
            #expect(sites.sites.map(\.name) == ["North Clinic", "South Clinic"])
            #expect(sites.sites[0].counts?.invited == 2)
            #expect(sites.sites[1].counts?.invited == 0)
            #expect(sites.study?.invited == 3)
            // Asked without counts (a page that only names the sites): the sites, nothing counted.
            let named = try await f.admin(.get, "/admin/v1/studies/SLEEPWELL/sites?counts=false", token: f.team.root, as: SiteList.self)
            #expect(named.value?.sites.map(\.name) == ["North Clinic", "South Clinic"])
            #expect(named.value?.sites.allSatisfy { $0.counts == nil } == true && named.value?.study == nil, "\(named.text)")
            #expect(!named.text.contains("invited"))
            let refused = try await f.admin(.get, "/admin/v1/studies/SLEEPWELL/sites?counts=no", token: f.team.root)
            #expect(refused.status == .badRequest && refused.text.contains("counts is true or false"))
            #expect(try await f.registration.auditActors("invitations.created") == ["root@studystack.test"])

            // Listed for a study admin with addresses, read audited; for a viewer without.
            let listed = try await f.invitations()
            #expect(listed.invitations.count == 3 && listed.identities)
            let viewer = try await f.invitations(token: f.team.viewer)
            #expect(viewer.invitations.count == 3 && viewer.invitations.allSatisfy { $0.email == nil })
            #expect(try await f.registration.auditActors("invitations.identities_read") == ["root@studystack.test"])
            #expect(try await f.invitations("?site=\(north.siteId)").invitations.count == 2)
        }
    }

    @Test func aCSVWithOneBadLineIsRefusedWholeAndChangesNothing() async throws {
        try await InvitationFixture.run { f in
            _ = try await f.createSite("North Clinic")
            for (csv, lines) in [
                ("email,site\nann@example.org,North Clinic\nnot-an-address,\ncleo@example.org,Nowhere\nann@example.org,\n", [3, 4, 5]),
                ("email,surgeryDate\nann@example.org,yesterday-ish\n", [2]),
                ("email,site\nann@example.org\n", [2]),
                ("site,name\nNorth Clinic,Ann\n", [1]),
                ("email,Email\nann@example.org,x\n", [1]),
            ] {
                let (status, _, text) = try await f.importCSV(csv)
                #expect(status == .unprocessableContent, "\(csv): \(text)")
                let body = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                guard case .array(let problems)? = body["error"]?["problems"] else {
                    Issue.record("no problems in \(text)")
                    continue
                }
                #expect(problems.count == lines.count, "\(text)")
                #expect(problems.compactMap { $0["pointer"]?.text?.split(separator: "/").dropFirst().first.flatMap { Int($0) } } == lines)
            }
            #expect(try await f.count(f.registration.postgres, "SELECT count(*)::int FROM invitations") == 0)
            #expect(try await f.count(f.registration.postgres, "SELECT count(*)::int FROM mail_outbox WHERE kind = 'invitation'") == 0)
            #expect(try await f.count(f.response.postgres, "SELECT count(*)::int FROM enrollment_tokens WHERE invitation_id IS NOT NULL") == 0)
            // A second invitation to the same address is refused; the first stays.
            #expect(try await f.importCSV("email\nann@example.org\n").status == .created)
            let again = try await f.importCSV("email\nANN@example.org\n")
            #expect(again.status == .unprocessableContent)
            #expect(again.text.contains("already has an invitation to this study"))
        }
    }

    @Test func anInvitedParticipantEnrollsWithTheirTokenAndIsShownAtTheirSite() async throws {
        try await InvitationFixture.run { f in
            let north = try await f.createSite("North Clinic")
            #expect(try await f.importCSV("email,site\ndan@example.org,North Clinic\n").status == .created)
            let token = try await f.invitationMail(to: "dan@example.org").token

            let dan = try await f.registration.signUp("dan@example.org")
            let enrolled = try await f.enroll(token: token)
            let appToken = try #require(enrolled.appToken, "\(enrolled.exception ?? "")")
            try await f.registration.join("SLEEPWELL", auth: dan.auth, userId: dan.userId, token: appToken)
            // The response service's outbox tells registration the token was spent.
            let invitation = try await eventually("the invitation shows enrolled", within: .seconds(30)) {
                try await f.invitations().invitations.first
            } until: { $0?.state == "enrolled" && $0?.participantId != nil }
            #expect(invitation?.sameEmail == true)
            #expect(try await f.enroll(token: token).exception == "Token already in use")

            let participants = try #require(try await f.admin(
                .get, "/admin/v1/studies/SLEEPWELL/participants?site=\(north.siteId)", token: f.team.root, as: ParticipantList.self).value)
            try #require(participants.participants.count == 1)
            #expect(participants.participants[0].email == "dan@example.org")
            #expect(participants.participants[0].siteName == "North Clinic")
            #expect(participants.participants[0].participantId == invitation?.participantId)
            let counts = try #require(try await f.sites().sites[0].counts)
            #expect((counts.invited, counts.enrolled, counts.participants) == (0, 1, 1))
            #expect(try await f.registration.auditActors("invitations.enrolled") == ["response-service"])

            // Withdrawing shows on the invitation and in the counts.
            let left = try await f.registration.call(
                "withdraw", method: .delete, body: ["studyId": "SLEEPWELL", "deleteData": false], auth: dan.auth, userId: dan.userId)
            #expect(left.status == .ok, "\(left.statusMessage ?? "")")
            #expect(try await f.invitations().invitations.first?.state == "withdrawn")
            let after = try #require(try await f.sites().sites[0].counts)
            #expect((after.enrolled, after.withdrawn, after.participants) == (0, 1, 0))
        }
    }

    @Test func aRevokedInvitationCannotBeUsedAndAnExpiredOneCanBeResent() async throws {
        try await InvitationFixture.run { f in
            #expect(try await f.importCSV("email\neve@example.org\nfay@example.org\n").status == .created)
            let listed = try await f.invitations().invitations
            try #require(listed.count == 2)
            let eve = try #require(listed.first { $0.email == "eve@example.org" })
            let fay = try #require(listed.first { $0.email == "fay@example.org" })
            let eveToken = try await f.invitationMail(to: "eve@example.org").token
            let fayToken = try await f.invitationMail(to: "fay@example.org").token

            let revoked = try await f.admin(.post, "\(Self.invitations)/\(eve.invitationId)/revoke", token: f.team.root, as: Invitation.self)
            #expect(revoked.status == .ok, "\(revoked.text)")
            #expect(revoked.value?.state == "revoked")
            #expect(try await f.enroll(token: eveToken).exception == "Token '\(eveToken)' has been withdrawn by the study team")
            let resendRevoked = try await f.admin(.post, "\(Self.invitations)/\(eve.invitationId)/resend", token: f.team.root)
            #expect(resendRevoked.status == .conflict, "\(resendRevoked.text)")

            #expect(try await f.registration.auditActors("invitations.revoked") == ["root@studystack.test"])

            // Fay's time runs out (moved into the past in both services), then a resend renews it.
            try await f.registration.sql("UPDATE invitations SET expires_at = now() - interval '1 day', last_sent_at = now() - interval '15 days'")
            try await f.response.sql("UPDATE enrollment_tokens SET expires_at = now() - interval '1 day' WHERE invitation_id IS NOT NULL")
            #expect(try await f.invitations("?state=expired").invitations.map(\.email) == ["fay@example.org"])
            #expect(try await f.enroll(token: fayToken).exception == "Token '\(fayToken)' has expired; ask the study team to send it again")
            let resent = try await f.admin(.post, "\(Self.invitations)/\(fay.invitationId)/resend", token: f.team.root, as: Invitation.self)
            #expect(resent.status == .ok, "\(resent.text)")
            #expect(resent.value?.state == "invited")
            #expect(resent.value?.sentCount == 2)
            let again = try await f.invitationMail(to: "fay@example.org", after: 1)
            #expect(again.token == fayToken, "a resend sends the same token")
            #expect(try await f.enroll(token: fayToken).appToken != nil)
            // Once used, it can be neither revoked nor resent.
            try await eventually("fay's invitation enrolled", within: .seconds(30)) {
                try await f.invitations("?state=enrolled").invitations.count
            } until: { $0 == 1 }
            #expect(try await f.admin(.post, "\(Self.invitations)/\(fay.invitationId)/revoke", token: f.team.root).status == .conflict)
        }
    }

    /// Invitation e-mails are bounded: five per invitation, ten minutes apart; 10,000 a day per
    /// study; 20,000 a day per admin. A refusal sends nothing and keeps nothing.
    @Test func invitationEMailsAreBoundedPerInvitationStudyAndAdmin() async throws {
        try await InvitationFixture.run { f in
            #expect(try await f.importCSV("email\ngus@example.org\n").status == .created)
            let gus = try #require(try await f.invitations().invitations.first)
            _ = try await f.invitationMail(to: "gus@example.org")
            let mails = { try await f.count(f.registration.postgres, "SELECT count(*)::int FROM mail_outbox") }
            #expect(try await mails() == 1)
            let resend = "\(Self.invitations)/\(gus.invitationId)/resend"

            let tooSoon = try await f.admin(.post, resend, token: f.team.root)
            #expect(tooSoon.status == .tooManyRequests, "\(tooSoon.text)")
            #expect(tooSoon.text.contains("less than 10 minutes ago"), "\(tooSoon.text)")
            try await f.registration.sql("UPDATE invitations SET last_sent_at = now() - interval '11 minutes'")
            #expect(try await f.admin(.post, resend, token: f.team.root).status == .ok)
            #expect(try await mails() == 2)
            try await f.registration.sql("UPDATE invitations SET sent_count = 5, last_sent_at = now() - interval '1 day'")
            let tooMany = try await f.admin(.post, resend, token: f.team.root)
            #expect(tooMany.status == .tooManyRequests, "\(tooMany.text)")
            #expect(tooMany.text.contains("sent 5 times"), "\(tooMany.text)")
            #expect(try await mails() == 2, "a refused resend sends nothing")

            // The study's day: 9,999 e-mails already sent (as if), so an import of two is refused whole.
            try await f.registration.sql(
                """
                INSERT INTO invitation_sends (invitation_id, study_id, actor, sent_at)
                SELECT gen_random_uuid(), 'SLEEPWELL', 'someone@studystack.test', now() - interval '1 hour' FROM generate_series(1, 9997)
                """)
            let overStudy = try await f.importCSV("email\nhal@example.org\nida@example.org\n")
            #expect(overStudy.status == .tooManyRequests, "\(overStudy.text)")
            #expect(overStudy.text.contains("10000 e-mails a day"), "\(overStudy.text)")
            #expect(try await f.invitations().invitations.count == 1, "nothing was kept")
            #expect(try await mails() == 2, "nothing was sent")
            #expect(try await f.importCSV("email\nhal@example.org\n").status == .created, "one more fits")
            // A day later they count for nothing.
            try await f.registration.sql("UPDATE invitation_sends SET sent_at = now() - interval '25 hours'")
            #expect(try await f.importCSV("email\nida@example.org\n").status == .created)

            // The admin's day, across studies.
            try await f.registration.sql(
                """
                INSERT INTO invitation_sends (invitation_id, study_id, actor)
                SELECT gen_random_uuid(), 'OTHERSTUDY', 'root@studystack.test' FROM generate_series(1, 19999)
                """)
            let overAdmin = try await f.importCSV("email\njon@example.org\nkim@example.org\n")
            #expect(overAdmin.status == .tooManyRequests, "\(overAdmin.text)")
            #expect(overAdmin.text.contains("20000 e-mails a day across all studies"), "\(overAdmin.text)")
            #expect(try await f.invitations().invitations.count == 3)
        }
    }

    @Test func onlyAStudyAdminInvitesAndManagesSitesAndBadInputChangesNothing() async throws {
        try await InvitationFixture.run { f in
            let site = try await f.createSite("North Clinic")
            #expect(try await f.importCSV("email\nann@example.org\n").status == .created)
            let invitation = try #require(try await f.invitations().invitations.first)
            let base = "/admin/v1/studies/SLEEPWELL"
            let writes: [(HTTPRequest.Method, String, String?)] = [
                (.post, "\(base)/invitations", #"{"email": "gus@example.org"}"#),
                (.post, "\(base)/invitations/import", "email\ngus@example.org\n"),
                (.post, "\(base)/invitations/\(invitation.invitationId)/resend", nil),
                (.post, "\(base)/invitations/\(invitation.invitationId)/revoke", nil),
                (.post, "\(base)/sites", #"{"name": "East"}"#),
                (.put, "\(base)/sites/\(site.siteId)", #"{"name": "East"}"#),
            ]
            try #require(writes.count == 6)
            for (method, path, body) in writes {
                #expect(try await f.admin(method, path, token: f.team.viewer, body: body).status == .forbidden, "\(path)")
                #expect(try await f.admin(method, path, token: nil, body: body).status == .unauthorized, "\(path)")
            }
            for path in ["\(base)/invitations", "\(base)/sites"] {
                #expect(try await f.admin(.get, path, token: f.team.stranger).status == .forbidden)
            }
            for (path, body, status) in [
                ("\(base)/invitations", "not json", 400),
                ("\(base)/invitations", #"{"email": "x"}"#, 422),
                ("\(base)/invitations", #"{"email": "gus@example.org", "siteId": "nowhere"}"#, 422),
                ("\(base)/sites", #"{"name": ""}"#, 400),
                // 50 letters with two combining marks each: 150 characters as PostgreSQL counts them.
                ("\(base)/sites", #"{"name": "\#(String(repeating: "a\u{301}\u{302}", count: 50))"}"#, 400),
                // 100 letters and a leading NEL (white space): 101 as sent, over the documented limit.
                ("\(base)/sites", #"{"name": "\u0085\#(String(repeating: "a", count: 100))"}"#, 400),
                ("\(base)/sites", #"{"name": "West", "location": "\#(String(repeating: " ", count: 201))"}"#, 400),
                ("\(base)/sites", #"{"name": "West", "location": "ward\nroom"}"#, 400),
                ("\(base)/sites", #"{"name": "north clinic"}"#, 409),
                ("\(base)/sites", #"{"name": "West", "targetEnrollment": 0}"#, 400),
                ("/admin/v1/studies/NOSUCHSTUDY/invitations", #"{"email": "gus@example.org"}"#, 404),
            ] {
                let reply = try await f.admin(.post, path, token: f.team.root, body: body)
                #expect(reply.status.code == status, "\(path) \(body): \(reply.text)")
            }
            #expect(try await f.admin(.get, "\(base)/invitations?state=lost", token: f.team.root).status == .badRequest)
            #expect(try await f.count(f.registration.postgres, "SELECT count(*)::int FROM invitations") == 1)
            #expect(try await f.count(f.registration.postgres, "SELECT count(*)::int FROM study_sites") == 1)

            // A decommissioned site takes no invitations; one by one works otherwise.
            let decommissioned = try await f.admin(
                .put, "\(base)/sites/\(site.siteId)", token: f.team.root, body: #"{"name": "North Clinic", "decommissioned": true}"#,
                as: Site.self)
            #expect(decommissioned.value?.decommissionedAt != nil)
            let refused = try await f.admin(.post, "\(base)/invitations", token: f.team.root, body: #"{"email": "gus@example.org", "siteId": "\#(site.siteId)"}"#)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("decommissioned"))
            let one = try await f.admin(.post, "\(base)/invitations", token: f.team.root, body: #"{"email": "gus@example.org"}"#, as: Invitation.self)
            #expect(one.status == .created, "\(one.text)")
            #expect(one.value?.email == "gus@example.org")
        }
    }
}
