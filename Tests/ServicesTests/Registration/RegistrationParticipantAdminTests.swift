import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// The registration service's admin API: a study's participants for its admins, signed in at
/// study-metadata (asked per request), e-mail addresses only for study admins, and every reading
/// of them audited.
@Suite(.needsCluster) struct RegistrationParticipantAdminTests {
    /// Registration with study-metadata live (study SLEEPWELL, a viewer on it, a stranger), and
    /// three participants in SLEEPWELL and one in another study.
    func withServices(
        _ body: @escaping @Sendable (_ client: any TestClientProtocol, _ root: String, _ viewer: String, _ stranger: String, PostgresClient) async throws -> Void
    ) async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            try await Self.seed(h.postgres, logger: Logger(label: "seed"))
            try await body(h.client, team.root, team.viewer, team.stranger, h.postgres)
        }
    }

    /// Ann enrolled and signed two consent versions; Bob withdrew; Cleo has not joined; Dan is in
    /// another study.
    static func seed(_ postgres: PostgresClient, logger: Logger) async throws {
        for (name, study, status) in [("ann", "SLEEPWELL", "inProgress"), ("bob", "SLEEPWELL", "Withdrawn"), ("cleo", "SLEEPWELL", "yetToJoin"), ("dan", "OTHER", "inProgress")] {
            let userId = UUID()
            let email = "\(name)@participants.test"
            try await postgres.query(
                """
                INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
                VALUES (\(userId), 'DEMOAPP', 'DEMOORG', \(email), \(email), 'x', true)
                """, logger: logger)
            try await postgres.query(
                """
                INSERT INTO participant_studies (user_id, study_id, status, enrolled_at, withdrawn_at, completion, adherence)
                VALUES (\(userId), \(study), \(status),
                        CASE WHEN \(status) = 'yetToJoin' THEN NULL ELSE timestamptz '2026-11-01 10:00:00+00' END,
                        CASE WHEN \(status) = 'Withdrawn' THEN timestamptz '2026-11-10 09:00:00+00' ELSE NULL END, 40, 75)
                """, logger: logger)
            if name == "ann" {
                for (version, sharing) in [("1.0", "Provided"), ("1.1", "Not Provided")] {
                    try await postgres.query(
                        """
                        INSERT INTO consent_records (user_id, app_id, study_id, version, status, sharing)
                        VALUES (\(userId), 'DEMOAPP', 'SLEEPWELL', \(version), 'completed', \(sharing))
                        """, logger: logger)
                }
                try await postgres.query(
                    """
                    INSERT INTO participant_activities (user_id, study_id, activity_id, updated_at)
                    VALUES (\(userId), 'SLEEPWELL', 'sleep', timestamptz '2026-11-20 08:30:00+00')
                    """, logger: logger)
            }
        }
    }

    func list(_ client: some TestClientProtocol, _ query: String, token: String?) async throws -> (HTTPResponse.Status, ParticipantList?, String) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/admin/v1/studies/SLEEPWELL/participants\(query)", method: .get, headers: headers) {
            ($0.status, try? JSONDecoder.iso8601.decode(ParticipantList.self, from: Data(buffer: $0.body)), String(buffer: $0.body))
        }
    }

    /// A GET of the admin API with `token`: the status and the body.
    func admin(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, token: String?) async throws -> (HTTPResponse.Status, Data) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: path, method: method, headers: headers) { ($0.status, Data(buffer: $0.body)) }
    }

    static func at(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }

    func identityReads(_ postgres: PostgresClient) async throws -> [String] {
        let rows = try await postgres.query(
            "SELECT actor FROM audit_events WHERE action = 'participants.identities_read' ORDER BY id", logger: Logger(label: "test"))
        var actors: [String] = []
        for try await actor in rows.decode(String.self) { actors.append(actor) }
        return actors
    }

    @Test func aStudyAdminSeesEachParticipantsStateAndIdentityAndTheReadingIsAudited() async throws {
        try await withServices { client, root, _, _, postgres in
            let (status, listed, body) = try await list(client, "", token: root)
            #expect(status == .ok, "\(body)")
            let page = try #require(listed)
            #expect(page.identities)
            #expect(page.next == nil)
            #expect(page.participants.count == 3)
            let byEmail = Dictionary(uniqueKeysWithValues: page.participants.map { ($0.email ?? "", $0) })
            #expect(byEmail.keys.sorted() == ["ann@participants.test", "bob@participants.test", "cleo@participants.test"])
            let ann = try #require(byEmail["ann@participants.test"])
            #expect(ann.status == "inProgress")
            #expect(ann.consentVersions == ["1.0", "1.1"])
            #expect(ann.sharing == "Not Provided")
            #expect(ann.enrolledAt == Self.at("2026-11-01T10:00:00Z"))
            #expect(ann.lastActivityAt == Self.at("2026-11-20T08:30:00Z"))
            #expect((ann.completion, ann.adherence) == (40, 75))
            let bob = try #require(byEmail["bob@participants.test"])
            #expect(bob.status == "Withdrawn" && bob.withdrawnAt == Self.at("2026-11-10T09:00:00Z"))
            #expect(bob.consentVersions.isEmpty && bob.sharing == nil && bob.lastActivityAt == nil)
            // Ids are neither the accounts' ids nor anything the apps hold, and differ per participant.
            #expect(Set(page.participants.map(\.participantId)).count == 3)
            #expect(try await identityReads(postgres) == ["root@studystack.test"])

            // Search by part of an e-mail, and by status.
            #expect(try await list(client, "?q=BOB%40", token: root).1?.participants.map(\.email) == ["bob@participants.test"])
            #expect(try await list(client, "?q=.test", token: root).1?.participants.count == 3)
            // LIKE's own characters match only themselves: no address has them.
            for text in ["%25", "_", "%5C"] {
                #expect(try await list(client, "?q=\(text)", token: root).1?.participants.isEmpty == true, "\(text)")
            }
            let withdrawn = try #require(try await list(client, "?status=Withdrawn", token: root).1)
            #expect(withdrawn.participants.map(\.email) == ["bob@participants.test"])
        }
    }

    /// 1,010 participants in SLEEPWELL, `crowd-0001@participants.test` on: more than a search or
    /// the owing filter reads by key.
    static func addCrowd(_ postgres: PostgresClient) async throws {
        try await postgres.query(
            """
            WITH made AS (
                INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
                SELECT gen_random_uuid(), 'DEMOAPP', 'DEMOORG', e, e, 'x', true
                FROM (SELECT format('crowd-%s@participants.test', lpad(i::text, 4, '0')) AS e FROM generate_series(1, 1010) i) x
                RETURNING user_id)
            INSERT INTO participant_studies (user_id, study_id, status) SELECT user_id, 'SLEEPWELL', 'inProgress' FROM made
            """, logger: Logger(label: "crowd"))
    }

    /// A search that matches more accounts than it reads by key pages through the study in its
    /// order; one that matches a few reads them by key. Both give the same rows a search over
    /// every participant gave.
    @Test func aSearchMatchingManyPagesThroughThemAndOneMatchingFewFindsThem() async throws {
        try await withServices { client, root, _, _, postgres in
            try await Self.addCrowd(postgres)
            var seen: [String] = []
            var after = ""
            for _ in 0..<4 {
                let page = try #require(try await list(client, "?q=crowd&limit=500\(after)", token: root).1)
                #expect(page.participants.allSatisfy { $0.email?.hasPrefix("crowd-") == true })
                seen += page.participants.map(\.participantId)
                guard let next = page.next else { break }
                after = "&after=\(next)"
            }
            #expect(seen.count == 1010)
            #expect(seen == seen.sorted() && Set(seen).count == 1010, "in participant-id order, each once")
            let few = try #require(try await list(client, "?q=CROWD-0777@", token: root).1)
            #expect(few.participants.map(\.email) == ["crowd-0777@participants.test"])
            let byId = try #require(try await list(client, "?q=\(seen[600].prefix(12))", token: root).1)
            #expect(byId.participants.map(\.participantId).contains(seen[600]))
        }
    }

    /// Who owes a signature: when more owe than are read by key, the study is walked in its order;
    /// when few do, they are read by key through the sets of versions signed; with a search
    /// beside it, those both name. Each time the same participants the rule gives over every row.
    @Test func whoOwesASignatureIsListedWhenManyOweAndWhenOneDoes() async throws {
        try await withServices { client, root, _, _, postgres in
            let logger = Logger(label: "crowd")
            try await Self.addCrowd(postgres)
            let inForce = try #require(try await list(client, "?consent=owed&limit=1", token: root).1).consentVersionsInForce
            // The rule as the participants page first wrote it, over every row.
            let owingOverEveryRow = {
                try await postgres.count(
                    """
                    SELECT count(*)::int FROM participant_studies ps
                    WHERE ps.study_id = 'SLEEPWELL' AND ps.status = 'inProgress' AND NOT EXISTS (
                        SELECT 1 FROM consent_records c
                        WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed'
                          AND (\(inForce)::text[] IS NULL OR c.version = ANY (\(inForce)::text[])))
                    """)
            }
            let listAll = { (query: String) async throws -> [ParticipantList.Participant] in
                var (seen, after): ([ParticipantList.Participant], String) = ([], "")
                for _ in 0..<5 {
                    let page = try #require(try await list(client, "?consent=owed&limit=500\(query)\(after)", token: root).1)
                    #expect(page.participants.allSatisfy { $0.owesConsent })
                    seen += page.participants
                    guard let next = page.next else { break }
                    after = "&after=\(next)"
                }
                return seen
            }
            let many = try await listAll("")
            let expected = try await owingOverEveryRow()
            #expect(expected >= 1010)
            #expect(many.count == expected)
            #expect(many.map(\.participantId) == many.map(\.participantId).sorted(), "in participant-id order")
            // All the crowd but one sign a version in force.
            let version = inForce?.first ?? "1.0"
            try await postgres.query(
                """
                INSERT INTO consent_records (user_id, app_id, study_id, version, status, sharing)
                SELECT user_id, 'DEMOAPP', 'SLEEPWELL', \(version), 'completed', 'Provided' FROM participants
                WHERE email LIKE 'crowd-%' AND email <> 'crowd-0500@participants.test'
                """, logger: logger)
            let few = try await listAll("")
            #expect(few.count == (try await owingOverEveryRow()))
            #expect(few.count == expected - 1009)
            #expect(few.contains { $0.email == "crowd-0500@participants.test" })
            // A search matching the whole crowd (too many to read by key) beside the few who owe,
            // and one matching one who signed.
            #expect(try await listAll("&q=crowd").map(\.email) == ["crowd-0500@participants.test"])
            #expect(try await listAll("&q=crowd-0777@").isEmpty)
        }
    }

    @Test func aViewerSeesPseudonymousIdsOnlyAndCannotSearchByEmail() async throws {
        try await withServices { client, root, viewer, _, postgres in
            let page = try #require(try await list(client, "", token: viewer).1)
            #expect(!page.identities)
            #expect(page.participants.count == 3)
            #expect(page.participants.allSatisfy { $0.email == nil })
            #expect(try await identityReads(postgres).isEmpty, "nothing identifying was read")
            // An e-mail search would tell a viewer who takes part: it matches nothing for them.
            #expect(try await list(client, "?q=ann", token: viewer).1?.participants.isEmpty == true)
            // A participant id's beginning finds the participant.
            let id = page.participants[1].participantId
            #expect(try await list(client, "?q=\(id.prefix(8))", token: viewer).1?.participants.map(\.participantId) == [id])
            #expect(try await list(client, "?q=\(id.prefix(10).uppercased())", token: viewer).1?.participants.map(\.participantId) == [id])
            #expect(try await list(client, "?q=\(id)", token: viewer).1?.participants.map(\.participantId) == [id])
            // Not the start of an id (a dash out of place, past its end): no one.
            #expect(try await list(client, "?q=\(id.prefix(8))x", token: viewer).1?.participants.isEmpty == true)
            #expect(try await list(client, "?q=\(id)0", token: viewer).1?.participants.isEmpty == true)
            // The same participants carry the same ids for a study admin.
            let full = try #require(try await list(client, "", token: root).1)
            #expect(full.participants.map(\.participantId) == page.participants.map(\.participantId))
        }
    }

    @Test func pagesFollowOneAnotherWithoutGapOrRepeat() async throws {
        try await withServices { client, root, _, _, _ in
            let all = try #require(try await list(client, "", token: root).1).participants.map(\.participantId)
            #expect(all.count == 3)
            #expect(all == all.sorted())
            let first = try #require(try await list(client, "?limit=2", token: root).1)
            #expect(first.participants.count == 2)
            let next = try #require(first.next)
            let second = try #require(try await list(client, "?limit=2&after=\(next)", token: root).1)
            #expect(second.participants.count == 1)
            #expect(second.next == nil)
            #expect((first.participants + second.participants).map(\.participantId) == all)
        }
    }

    @Test func completionAndAdherenceFollowTheRunsTheAppReported() async throws {
        try await withServices { client, root, _, _, postgres in
            // Ann's app reported 40% and 75% for the study, and no runs yet: those stand.
            var ann = try #require(try await list(client, "?status=inProgress", token: root).1?.participants.first)
            #expect((ann.completion, ann.adherence) == (40, 75))
            // Then her activities' runs: 3 of 29 done, 2 missed (of 5 whose time has passed), and a
            // second activity with 1 of 1 done. The study's figures follow the runs, whatever the
            // app said of the study: 4 of 30 is 13%, 4 of 6 is 67%.
            try await postgres.query(
                "UPDATE participant_activities SET runs_total = 29, runs_completed = 3, runs_missed = 2 WHERE study_id = 'SLEEPWELL'",
                logger: Logger(label: "test"))
            try await postgres.query(
                """
                INSERT INTO participant_activities (user_id, study_id, activity_id, runs_total, runs_completed, runs_missed, updated_at)
                SELECT user_id, study_id, 'weekly', 1, 1, 0, timestamptz '2026-11-19 08:00:00+00'
                FROM participant_activities WHERE study_id = 'SLEEPWELL'
                """, logger: Logger(label: "test"))
            ann = try #require(try await list(client, "?status=inProgress", token: root).1?.participants.first)
            #expect((ann.completion, ann.adherence) == (13, 67))
            #expect(ann.lastActivityAt == Self.at("2026-11-20T08:30:00Z"))
        }
    }

    @Test func theAudienceOfAMessageSentNowIsCountedForTheStudysTeamOnly() async throws {
        try await withServices { client, _, viewer, stranger, _ in
            // Ann joined; Bob withdrew and Cleo has not joined; Dan is in another study. Ann has
            // no signed-in device, so a message reaches her in the app's list only.
            let (status, body) = try await admin(client, .get, "/admin/v1/studies/SLEEPWELL/audience", token: viewer)
            #expect(status == .ok)
            #expect(try JSONDecoder().decode(StudyAudience.self, from: body) == StudyAudience(participants: 1, devices: 0))
            #expect(try await admin(client, .get, "/admin/v1/studies/SLEEPWELL/audience", token: stranger).0 == .forbidden)
            #expect(try await admin(client, .get, "/admin/v1/studies/SLEEPWELL/audience", token: nil).0 == .unauthorized)
        }
    }

    @Test func aParticipantIsFoundByTheHashOfTheIdTheirAppReportedAndCarriesIt() async throws {
        try await withServices { client, root, _, _, postgres in
            let hash = String(repeating: "ab", count: 32)
            try await postgres.query(
                """
                UPDATE participant_studies SET participant_token_hash = \(hash)
                WHERE user_id = (SELECT user_id FROM participants WHERE email = 'ann@participants.test')
                """, logger: Logger(label: "test"))
            let (status, found, _) = try await list(client, "?appTokenSHA256=\(hash.uppercased())", token: root)
            #expect(status == .ok)
            let rows = try #require(found?.participants)
            try #require(rows.count == 1)
            #expect(rows[0].email == "ann@participants.test")
            #expect(rows[0].appTokenSHA256 == hash)
            let (_, everyone, _) = try await list(client, "", token: root)
            #expect(everyone?.participants.filter { $0.appTokenSHA256 != nil }.count == 1, "only Ann's app has reported")
            let (_, nobody, _) = try await list(client, "?appTokenSHA256=\(String(repeating: "0", count: 64))", token: root)
            #expect(nobody?.participants == [])
        }
    }

    @Test func aCallerWithoutTheRoleOrWithBadParametersGetsNothing() async throws {
        try await withServices { client, _, viewer, stranger, postgres in
            #expect(try await list(client, "", token: nil).0 == .unauthorized)
            #expect(try await list(client, "", token: "not-a-token").0 == .unauthorized)
            #expect(try await list(client, "", token: stranger).0 == .forbidden)
            // Over 100 code points: 101 letters; 60 letters each with a combining accent (60
            // characters, 120 code points, as JSON Schema counts); 99 letters inside spaces.
            let accented = String(repeating: "e\u{0301}", count: 60).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            for bad in [
                "?status=enrolled", "?limit=0", "?limit=501", "?limit=x", "?after=nope", "?q=" + String(repeating: "a", count: 101),
                "?q=" + accented, "?q=%20%20" + String(repeating: "a", count: 99), "?appTokenSHA256=abc",
                "?appTokenSHA256=" + String(repeating: "g", count: 64),
            ] {
                let (status, listed, body) = try await list(client, bad, token: viewer)
                #expect(status == .badRequest, "\(bad): \(body)")
                #expect(listed == nil)
            }
            #expect(try await identityReads(postgres).isEmpty)
        }
    }

    @Test func adherenceCountsEachActivitysParticipantsUpToDateBehindOrNotStarted() async throws {
        try await withServices { client, _, viewer, stranger, postgres in
            // Ann (in progress) has reported `sleep` started with no run missed (the seed); Cleo
            // has not joined and Bob withdrew, so neither counts. Ann and a new participant, Eva,
            // report `diary`: Ann missed a run, Eva has not started it.
            let logger = Logger(label: "test")
            let eva = UUID()
            try await postgres.query(
                """
                INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
                VALUES (\(eva), 'DEMOAPP', 'DEMOORG', 'eva@participants.test', 'eva@participants.test', 'x', true)
                """, logger: logger)
            try await postgres.query(
                "INSERT INTO participant_studies (user_id, study_id, status) VALUES (\(eva), 'SLEEPWELL', 'completed')", logger: logger)
            try await postgres.query(
                """
                INSERT INTO participant_activities (user_id, study_id, activity_id, activity_state, runs_total, runs_completed, runs_missed)
                SELECT user_id, 'SLEEPWELL', 'diary', 'inProgress', 10, 3, 2 FROM participants WHERE email = 'ann@participants.test'
                UNION ALL SELECT \(eva), 'SLEEPWELL', 'diary', 'yetToJoin', 10, 0, 0
                UNION ALL SELECT user_id, 'SLEEPWELL', 'diary', 'inProgress', 10, 9, 0 FROM participants WHERE email = 'bob@participants.test'
                """, logger: logger)
            try await postgres.query(
                "UPDATE participant_activities SET activity_state = 'inProgress', runs_completed = 1 WHERE activity_id = 'sleep'",
                logger: logger)
            var headers: HTTPFields = [.authorization: "Bearer \(viewer)"]
            let (status, adherence) = try await client.execute(
                uri: "/admin/v1/studies/SLEEPWELL/adherence", method: .get, headers: headers
            ) { ($0.status, try? JSONDecoder().decode(ActivityAdherence.self, from: Data(buffer: $0.body))) }
            #expect(status == .ok)
            let result = try #require(adherence)
            #expect(result.participants == 2, "Ann and Eva; Bob withdrew and Cleo has not joined")
            try #require(result.activities.count == 2)
            let diary = result.activities[0]
            #expect(diary.activityId == "diary")
            #expect((diary.upToDate, diary.behind, diary.notStarted) == (0, 1, 1))
            #expect((diary.runsCompleted, diary.runsMissed) == (3, 2), "the withdrawn participant's runs are not counted")
            let sleep = result.activities[1]
            #expect(sleep.activityId == "sleep")
            #expect((sleep.upToDate, sleep.behind, sleep.notStarted) == (1, 0, 1), "Eva never reported it: not started")
            headers[.authorization] = "Bearer \(stranger)"
            #expect(try await client.execute(uri: "/admin/v1/studies/SLEEPWELL/adherence", method: .get, headers: headers) { $0.status }
                == .forbidden)
        }
    }

    @Test func theEnrollmentTimelineCountsEnrollmentsAndWithdrawalsPerDayAndSite() async throws {
        try await withServices { client, _, viewer, stranger, _ in
            func timeline(_ token: String) async throws -> (HTTPResponse.Status, EnrollmentTimeline?) {
                try await client.execute(
                    uri: "/admin/v1/studies/SLEEPWELL/enrollment-timeline", method: .get, headers: [.authorization: "Bearer \(token)"]
                ) { ($0.status, try? JSONDecoder().decode(EnrollmentTimeline.self, from: Data(buffer: $0.body))) }
            }
            // Ann and Bob enrolled on 1 November, Bob withdrew on the 10th; Cleo never enrolled
            // and Dan is in another study. Nobody has a site.
            let (status, found) = try await timeline(viewer)
            #expect(status == .ok)
            #expect(found == EnrollmentTimeline(sites: [
                .init(siteId: nil, name: "No site", days: [
                    .init(date: "2026-11-01", enrolled: 2, withdrawn: 0), .init(date: "2026-11-10", enrolled: 0, withdrawn: 1),
                ])
            ]))
            #expect(try await timeline(stranger).0 == .forbidden)
        }
    }

    @Test func sortedPagesFollowOneAnotherInEveryOrder() async throws {
        try await withServices { client, root, viewer, _, postgres in
            // Distinct enrollment dates; Cleo has none (sorts first ascending, last descending).
            try await postgres.query(
                """
                UPDATE participant_studies ps SET enrolled_at = timestamptz '2026-11-05 10:00:00+00'
                FROM participants p WHERE p.user_id = ps.user_id AND p.email = 'bob@participants.test'
                """, logger: Logger(label: "test"))
            let byEmail = { (page: ParticipantList?) in page?.participants.compactMap(\.email) ?? [] }
            for (query, expected) in [
                ("sort=status", ["bob@participants.test", "ann@participants.test", "cleo@participants.test"]),
                ("sort=status&order=desc", ["cleo@participants.test", "ann@participants.test", "bob@participants.test"]),
                ("sort=enrolledAt", ["cleo@participants.test", "ann@participants.test", "bob@participants.test"]),
                ("sort=enrolledAt&order=desc", ["bob@participants.test", "ann@participants.test", "cleo@participants.test"]),
                ("sort=lastActivityAt&order=desc", ["ann@participants.test"]),
            ] {
                let whole = try await list(client, "?\(query)", token: root).1
                if expected.count == 1 {
                    #expect(byEmail(whole).first == expected[0], "\(query): the one with an activity first")
                    continue
                }
                #expect(byEmail(whole) == expected, "\(query)")
                // Two pages of one and two: the second continues from the first's last row.
                let first = try #require(try await list(client, "?\(query)&limit=1", token: root).1)
                let next = try #require(first.next)
                let rest = try await list(client, "?\(query)&limit=2&after=\(next)", token: root).1
                #expect(byEmail(first) + byEmail(rest) == expected, "\(query), paged")
            }
            // A viewer gets the same order, without addresses.
            let ids = try #require(try await list(client, "?sort=status", token: root).1).participants.map(\.participantId)
            #expect(try await list(client, "?sort=status", token: viewer).1?.participants.map(\.participantId) == ids)
            for bad in ["?sort=email", "?sort=", "?order=up", "?sort=status&order=DESC"] {
                #expect(try await list(client, bad, token: root).0 == .badRequest, "\(bad)")
            }
        }
    }
}
