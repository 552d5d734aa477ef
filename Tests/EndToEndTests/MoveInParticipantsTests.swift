import Foundation
import JSONText
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Moving a MyStudies 2.x deployment's participants in: its three MySQL databases in a real
/// MariaDB, made by the release's scripts and filled as its services write them; the real
/// `studystack-import` reads them, reports a dry run and imports into a platform of the three
/// real executables; a second run changes nothing. Then the participants' apps, as the iOS and
/// Android apps call: the same e-mail and password sign in, the same study and participant id
/// come back with the activity states, and the next response is taken as theirs.
@Suite(.needsCluster) struct MoveInParticipantsTests {
    static let appKey = MyStudiesSourceDeployment.id("demo-app")
    static let studyKey = MyStudiesSourceDeployment.id("demo-study")
    static let siteKey = MyStudiesSourceDeployment.id("demo-site")
    static let pdf = Data("%PDF-1.4\n% the consent Ana signed\n%%EOF\n".utf8)

    /// iOS and Android participants enrolled (one with a signed PDF and activity states), one
    /// withdrawn, one who was signing in with a temporary password, and one enrolled in a study
    /// that is not moved in.
    static func participants() -> [MyStudiesSourceParticipant] {
        func enrolled(_ seed: String, _ email: String, _ password: String) -> MyStudiesSourceParticipant {
            var participant = MyStudiesSourceParticipant(seed: seed, appKey: appKey, appId: "DEMOAPP", email: email, password: password)
            participant.enrolment = .init(studyKey: studyKey, studyId: "DEMOSTUDY", siteKey: siteKey, participantId: MyStudiesSourceDeployment.id("pid-\(seed)"))
            return participant
        }
        var ios = enrolled("ios", "ana@example.org", "Ana-Passw0rd!")
        // Invited by the site, with a token as the participant manager makes them (8 letters and digits).
        ios.invitation = .init(token: "AbCd1234", studyKey: studyKey, siteKey: siteKey)
        ios.enrolment?.signedPDF = pdf
        ios.enrolment?.activities = [("kicks", "1.0", "inProgress", "3", 2, 0, 5)]
        let android = enrolled("android", "bo@example.org", "Bo-Passw0rd!")
        var withdrawn = enrolled("withdrawn", "cy@example.org", "Cy-Passw0rd!")
        withdrawn.enrolment?.status = "withdrawn"
        withdrawn.enrolment?.withdrawnAt = "2026-11-02 14:00:00"
        var resetting = enrolled("resetting", "di@example.org", "Di-Temp0rary!")
        resetting.authStatus = 3
        return [ios, android, withdrawn, resetting]
    }

    /// Invited at the source and not yet enrolled: no account, an open token.
    static let invitedEmail = "fay@example.org"
    static let openToken = "Zz9yX8wV"

    @Test func participantsMoveInAndTheirAppsCarryOn() async throws {
        let server = try await MariaDBProcess.start()
        let deployment = try await MyStudiesSourceDeployment.create(on: server)
        try await deployment.insertApp(key: Self.appKey, appId: "DEMOAPP", name: "Demo app")
        try await deployment.insertStudy(
            key: Self.studyKey, appKey: Self.appKey, studyId: "DEMOSTUDY", siteKey: Self.siteKey,
            locationKey: MyStudiesSourceDeployment.id("demo-location"), locationName: "Main site")
        let gone = MyStudiesSourceDeployment.id("gone-study")
        try await deployment.insertStudy(
            key: gone, appKey: Self.appKey, studyId: "GONESTUDY", siteKey: MyStudiesSourceDeployment.id("gone-site"),
            locationKey: MyStudiesSourceDeployment.id("gone-location"), locationName: "Closed site")
        var elsewhere = MyStudiesSourceParticipant(seed: "elsewhere", appKey: Self.appKey, appId: "DEMOAPP", email: "ed@example.org", password: "Ed-Passw0rd!")
        elsewhere.enrolment = .init(studyKey: gone, studyId: "GONESTUDY", siteKey: MyStudiesSourceDeployment.id("gone-site"), participantId: MyStudiesSourceDeployment.id("pid-elsewhere"))
        var invited = MyStudiesSourceParticipant(seed: "invited", appKey: Self.appKey, appId: "OTHERAPP", email: Self.invitedEmail, password: "-")
        invited.invitation = .init(token: Self.openToken, studyKey: Self.studyKey, siteKey: Self.siteKey)
        let participants = Self.participants() + [elsewhere]
        var batch = MyStudiesSourceDeployment.Batch()
        // Only the invitation: the person never signed up at the source.
        var invitationOnly = MyStudiesSourceDeployment.Batch()
        try invited.add(to: &invitationOnly, bucket: deployment.consentBucket)
        batch.participantDatastore += invitationOnly.participantDatastore.filter { $0.contains("participant_registry_site") }
        for participant in participants { try participant.add(to: &batch, bucket: deployment.consentBucket) }
        try await deployment.run(batch)

        try await Platform.run { platform in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("move-in-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let export = folder.appendingPathComponent("participants.json")

            // Read: SELECTs only, as a reader that may do nothing else; the file is its owner's only.
            let read = try await MoveInStudiesTests.command(
                ["participants", "read", "--mysql-port", String(server.port), "--mysql-user", server.readerUser, "--app-id", "DEMOAPP",
                 "--consent-files", deployment.consentBucket.path, "--out", export.path],
                environment: ["MYSTUDIES_MYSQL_PASSWORD": server.readerPassword])
            #expect(String(decoding: read, as: UTF8.self).contains(
                "read 5 accounts, 5 enrolments, 5 signatures (1 PDFs), 1 activity states, 2 sites and 2 invitations"))
            let permissions = try FileManager.default.attributesOfItem(atPath: export.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)

            let arguments = [export.path, "--to", platform.registration.baseURL, "--app-id", "DEMOAPP", "--json", "--accounts-per-request", "2"]
            let admin = ["STUDYSTACK_ADMIN_TOKEN": platform.adminToken]

            // The dry run: the counts, the findings, and nothing written.
            let planned = try JSONDecoder().decode(
                ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "plan"] + arguments, environment: admin))
            #expect(planned.dryRun)
            #expect(planned.counts.accounts == 5 && planned.counts.new == 5 && planned.counts.alreadyImported == 0)
            #expect(planned.counts.passwordsCarried == 4 && planned.counts.passwordResets == 1)
            #expect(planned.counts.studyStates == 4 && planned.counts.enrolments == 3 && planned.counts.withdrawals == 1)
            #expect(planned.counts.signatures == 4 && planned.counts.signedPDFs == 1 && planned.counts.activityStates == 1)
            #expect(planned.findings.contains { $0.studyId == "GONESTUDY" && $0.message.contains("move the studies in first") })
            #expect(planned.findings.contains { $0.effect == .changed && $0.message.contains("temporary password") })
            #expect(planned.counts.sites == 1 && planned.counts.invitations == 2 && planned.counts.openInvitations == 1)
            #expect(planned.findings.contains { $0.at.hasPrefix("sites#") && $0.studyId == "GONESTUDY" })
            #expect(try await Self.count("SELECT count(*)::int FROM participants", platform) == 0)

            // The import, then again: the second changes nothing.
            let imported = try JSONDecoder().decode(
                ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
            #expect(!imported.dryRun && imported.counts.new == 5 && imported.counts.enrolments == 3)
            #expect(imported.counts.sites == 1 && imported.counts.invitations == 2 && imported.counts.openInvitations == 1)
            #expect(try await Self.count("SELECT count(*)::int FROM participants", platform) == 5)
            #expect(try await Self.count("SELECT count(*)::int FROM moved_in_accounts WHERE user_id IS NOT NULL", platform) == 5)
            // The import's own events: deliveries from study-metadata (the app's settings) may land
            // at any time and are audited too.
            let movedIn = "SELECT count(*)::int FROM audit_events WHERE action LIKE '%moved_in'"
            let auditBefore = try await Self.count(movedIn, platform)
            let again = try JSONDecoder().decode(
                ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
            #expect(again.counts.new == 0 && again.counts.alreadyImported == 5 && again.counts.sites == 0 && again.counts.invitations == 0)
            // Ana's standing is at her site, and the invitation she enrolled with is hers.
            #expect(try await Self.count(
                """
                SELECT count(*)::int FROM participant_studies ps JOIN participants p USING (user_id)
                JOIN invitations i ON i.user_id = ps.user_id AND i.study_id = ps.study_id
                WHERE p.email = 'ana@example.org' AND ps.site_id IS NOT NULL AND i.enrolled_at IS NOT NULL AND i.site_id = ps.site_id
                """, platform) == 1)
            #expect(try await Self.count("SELECT count(*)::int FROM participants", platform) == 5)
            #expect(try await Self.count(movedIn, platform) == auditBefore)
            let responseParticipants = try await platform.withResponseDatabase { client, logger in
                let rows = try await client.query("SELECT status, count(*)::int FROM participants GROUP BY status ORDER BY status", logger: logger)
                var counts: [String: Int] = [:]
                for try await (status, count) in rows.decode((String, Int).self) { counts[status] = count }
                return counts
            }
            #expect(responseParticipants == ["enrolled": 3, "withdrawn": 1])

            // The team sees them in the study's participants, with their consent versions and sharing.
            let listed = try await platform.admin.send(.GET, platform.registration.baseURL + "/admin/v1/studies/DEMOSTUDY/participants?limit=50")
            #expect(listed.status == 200, "\(listed.text)")
            let rows = listed.json?["participants"]?.array ?? []
            try #require(rows.count == 4)
            #expect(rows.filter { $0["status"]?.string == "Withdrawn" }.count == 1)
            let anaRow = try #require(rows.first { $0["email"]?.string == "ana@example.org" })
            #expect(anaRow["consentVersions"]?.array == [.string("1.0")] && anaRow["sharing"]?.string == "Provided", "\(anaRow)")

            try await Self.responsesMoveIn(platform, participant: participants[0])
            try await Self.labKeyResponsesMoveIn(platform, participant: participants[0])
            try await Self.appsCarryOn(platform, participants: participants)
        }
    }

    /// A kick-counter response as MyStudies 2.x's response server stores it in Firestore: the
    /// metadata bean's properties, the step joined with its design, the value list as sent, and
    /// what the server adds.
    static func storedKicks(participant: String, run: Int, count: Int) throws -> JSONValue {
        let text = """
            {"studyId": "DEMOSTUDY", "studyVersion": "1.0", "activityId": "kicks", "activityRunId": "\(run)", "activityType": "task",
             "name": "kicks", "version": "1.0", "lastModified": "", "startDate": "", "endDate": "",
             "results": [{"type": "task", "resultType": "fetalKickCounter", "key": "counter", "title": "Kick counter", "text": "",
               "skipped": false, "startTime": "2026-10-0\(run)T15:54:21.000+0000", "endTime": "2026-10-0\(run)T15:55:21.000+0000",
               "value": [
                 {"resultType": "numeric", "key": "duration", "startTime": "2026-10-0\(run)T15:54:21.000+0000", "endTime": "2026-10-0\(run)T15:55:21.000+0000", "skipped": false, "value": 60},
                 {"resultType": "numeric", "key": "count", "startTime": "2026-10-0\(run)T15:54:21.000+0000", "endTime": "2026-10-0\(run)T15:55:21.000+0000", "skipped": false, "value": \(count)}],
               "options": [], "destinations": [], "format": {}, "steps": [], "actvityValueGroup": {"valueGroup": []}}],
             "participantId": "\(participant)", "siteId": "site-1", "sharingConsent": "Provided", "createdTimestamp": "\(1_790_784_000_000 + run * 86_400_000)"}
            """
        return try JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 1 << 20, maxNodes: 10_000))
    }

    /// Ana's stored responses move in from Firestore: a dry run, the import, and again; they are
    /// then in the study's table as her app reads it.
    static func responsesMoveIn(_ platform: Platform, participant: MyStudiesSourceParticipant) async throws {
        let participantId = try #require(participant.enrolment?.participantId)
        var missing = try storedKicks(participant: participantId, run: 3, count: 1).object ?? [:]
        missing.removeValue(forKey: "activityId")
        let server = try FirestoreTestServer(collections: [
            "DEMOSTUDY-RESPONSES/DEMOSTUDY/Activities": [
                (id: "r1", fields: try storedKicks(participant: participantId, run: 1, count: 12), createTime: "2026-10-01T16:00:00Z"),
                (id: "r2", fields: try storedKicks(participant: participantId, run: 2, count: 15), createTime: "2026-10-02T16:00:00Z"),
                (id: "r3", fields: try storedKicks(participant: "nobody-moved-in", run: 1, count: 9), createTime: "2026-10-02T16:00:00Z"),
                (id: "r4", fields: .object(missing), createTime: "2026-10-03T16:00:00Z"),
            ]
        ])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("move-in-responses-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("responses.jsonl").path
        let read = try await MoveInStudiesTests.command(
            ["responses", "read", "--firestore-project", server.project, "--firestore-url", server.base, "--study", "DEMOSTUDY", "--out", file],
            environment: ["GOOGLE_OAUTH_ACCESS_TOKEN": server.token])
        #expect(String(decoding: read, as: UTF8.self).contains("read 4 of DEMOSTUDY stored responses"))
        let arguments = [file, "--to", platform.response.baseURL, "--json"]
        let admin = ["STUDYSTACK_ADMIN_TOKEN": platform.adminToken]
        let decode = { (data: Data) throws -> ResponseMoveInReport in try #require(try JSONDecoder().decode([ResponseMoveInReport].self, from: data).first) }

        let planned = try decode(try await MoveInStudiesTests.command(["responses", "plan"] + arguments, environment: admin))
        #expect(planned.dryRun && planned.counts.read == 4 && planned.counts.new == 2)
        #expect(planned.counts.unknownParticipant == 1 && planned.counts.notImported == 1)
        #expect(planned.findings.contains { $0.at.hasSuffix("/r4") && $0.message.contains("names no activity") })
        let imported = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(!imported.dryRun && imported.counts.new == 2 && imported.counts.alreadyImported == 0)
        let again = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(again.counts.new == 0 && again.counts.alreadyImported == 2)

        // Processed into the study's table, as received at the source.
        let app = platform.app(.ios)
        let rows = try await eventually("the moved responses in the kick counter's table", within: .seconds(60)) {
            try await app.executeSQL(participantId: participantId, "SELECT \"count\" FROM kickscounter ORDER BY \"count\"")
                .json?["rows"]?.array.flatMap { $0.count >= 2 ? $0 : nil }
        }
        #expect(rows.compactMap { $0["data"]?["count"]?["value"]?.number } == [12, 15])
        let received = try await platform.withResponseDatabase { client, logger -> [Date] in
            let result = try await client.query("SELECT received_at FROM responses ORDER BY received_at", logger: logger)
            var times: [Date] = []
            for try await time in result.decode(Date.self) { times.append(time) }
            return times
        }
        // 16:00 UTC on 2026-10-01 and 2026-10-02, five minutes after each finished.
        #expect(received == [Date(timeIntervalSince1970: 1_790_870_400), Date(timeIntervalSince1970: 1_790_956_800)])
        // Counted where responses that arrived here are: registration follows them as runs of her
        // participation, with the times they were received and finished at the source.
        let hash = SecureToken.hash(participantId)
        _ = try await eventually("the moved responses counted as runs", within: .seconds(60)) {
            try await count(
                """
                SELECT count(*)::int FROM response_arrivals WHERE study_id = 'DEMOSTUDY' AND participant_token_hash = '\(hash)'
                  AND activity_id = 'kicks' AND run_id IN (1, 2) AND received_at < '2026-10-05' AND finished_at IS NOT NULL
                """, platform)
        } until: { $0 == 2 }
    }

    /// Ana's kick counts from a LabKey-era response server's exported lists: rebuilt against the
    /// activity as the study-metadata API serves it (read from this platform, which serves the same
    /// API), moved in like the Firestore ones, processed, and counted as runs; a withdrawn
    /// participant's row, whose app token the server cleared, is said and left.
    static func labKeyResponsesMoveIn(_ platform: Platform, participant: MyStudiesSourceParticipant) async throws {
        let participantId = try #require(participant.enrolment?.participantId)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("move-in-labkey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        _ = try await MoveInStudiesTests.command(
            ["studies", "read", "--from", platform.metadata.baseURL + "/StudyMetaData", "--app-id", "DEMOAPP", "--org-id", "DEMOORG",
             "--study", "DEMOSTUDY", "--out", path("studies.json")],
            environment: ["MYSTUDIES_APP_CREDENTIAL": platform.iosCredential])
        // As the server stored two kick counts of Ana's (participant 4) and one of a participant who
        // withdrew since (9): a row in the activity's list, the task's results in the list below it.
        var zip = ZipWriter()
        zip.add("lists/kicks.tsv", Array("Key\tParticipantId\n1\t4\n2\t4\n3\t9\n".utf8))
        zip.add("lists/kickscounter.tsv", Array("Key\tkicksId\tduration\tcount\tParticipantId\n1\t1\t60.0\t21.0\t4\n2\t2\t60.0\t17.0\t4\n3\t3\t60.0\t5.0\t9\n".utf8))
        zip.add("lists/lists.xml", Array("<tables xmlns=\"http://labkey.org/data/xml\"/>".utf8))
        try Data(zip.bytes()).write(to: URL(fileURLWithPath: path("kicks.lists.zip")))
        try Data("Row Id\tApp Token\tStatus\n4\t\(participantId)\tEnrolled\n9\t\tWithdrawn\n".utf8).write(to: URL(fileURLWithPath: path("Participant.tsv")))
        var metadata = "Row Id\tList Name\tActivity Id\tField Name\tStart Time\tEnd Time\tSkipped\tParticipant Id\tCreated\n"
        for (row, (key, day)) in [(1, 20), (2, 21), (3, 22)].enumerated() {
            for (index, field) in ["duration", "count"].enumerated() {
                metadata += "\(row * 2 + index + 1)\tkicksCounter\t\(key)\t\(field)\t2026-09-\(day) 10:00:00.0\t2026-09-\(day) 10:01:00.0\tfalse\t\(key == 3 ? 9 : 4)\t2026-09-\(day) 10:05:00.0\n"
            }
        }
        try Data(metadata.utf8).write(to: URL(fileURLWithPath: path("ResponseMetadata.tsv")))

        let read = String(decoding: try await MoveInStudiesTests.command(
            ["responses", "read-labkey", "--lists", path("kicks.lists.zip"), "--participants", path("Participant.tsv"),
             "--response-metadata", path("ResponseMetadata.tsv"), "--studies", path("studies.json"), "--study", "DEMOSTUDY",
             "--time-zone", "UTC", "--out", path("labkey.jsonl")], environment: [:]), as: UTF8.self)
        #expect(read.contains("DEMOSTUDY: 3 responses in the activities' lists, 2 rebuilt into"), "\(read)")
        #expect(read.contains("lists/kicks/3: participant 9 has no app token at the source"), "\(read)")
        let permissions = try FileManager.default.attributesOfItem(atPath: path("labkey.jsonl"))[.posixPermissions] as? Int
        #expect(permissions == 0o600)

        let arguments = [path("labkey.jsonl"), "--to", platform.response.baseURL, "--json"]
        let admin = ["STUDYSTACK_ADMIN_TOKEN": platform.adminToken]
        let decode = { (data: Data) throws -> ResponseMoveInReport in try #require(try JSONDecoder().decode([ResponseMoveInReport].self, from: data).first) }
        let planned = try decode(try await MoveInStudiesTests.command(["responses", "plan"] + arguments, environment: admin))
        #expect(planned.dryRun && planned.counts.read == 2 && planned.counts.new == 2 && planned.counts.notImported == 0)
        let imported = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(imported.counts.new == 2)
        let again = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(again.counts.new == 0 && again.counts.alreadyImported == 2)

        let app = platform.app(.ios)
        let rows = try await eventually("the LabKey-era kick counts in the kick counter's table", within: .seconds(60)) {
            try await app.executeSQL(participantId: participantId, "SELECT \"count\" FROM kickscounter ORDER BY \"count\"")
                .json?["rows"]?.array.flatMap { $0.count >= 4 ? $0 : nil }
        }
        #expect(rows.compactMap { $0["data"]?["count"]?["value"]?.number } == [12, 15, 17, 21])
        let hash = SecureToken.hash(participantId)
        _ = try await eventually("the LabKey-era responses counted as runs", within: .seconds(60)) {
            try await count(
                """
                SELECT count(*)::int FROM response_arrivals WHERE study_id = 'DEMOSTUDY' AND participant_token_hash = '\(hash)'
                  AND activity_id = 'kicks' AND received_at BETWEEN '2026-09-20' AND '2026-09-22' AND finished_at IS NOT NULL
                """, platform)
        } until: { $0 == 2 }
    }

    /// The iOS and the Android participant sign in with their old passwords and go on; the one
    /// whose password could not come over is e-mailed a temporary one.
    static func appsCarryOn(_ platform: Platform, participants: [MyStudiesSourceParticipant]) async throws {
        for (participant, kind) in [(participants[0], MyStudiesApp.Kind.ios), (participants[1], .android)] {
            let app = platform.app(kind)
            let login = try await app.registration("login", body: ["emailId": participant.email, "password": participant.password])
            #expect(login.status == 200, "\(login.text)")
            #expect(login.json?["verified"]?.bool == true && login.json?["resetPassword"]?.bool != true)
            app.signedIn(login)
            let states = try await app.registration("studyState", method: .GET)
            let study = try #require(states.json?["studies"]?.array?.first { $0["studyId"]?.string == "DEMOSTUDY" })
            let participantId = try #require(participant.enrolment?.participantId)
            #expect(study["status"]?.string == "inProgress")
            #expect(study["participantId"]?.string == participantId)
            #expect(study["enrolledDate"]?.string?.hasPrefix("2026-10-01T09:30:00") == true)
            if kind == .ios {
                let activities = try await app.registration("activityState", method: .GET, query: [("studyId", "DEMOSTUDY")])
                let kicks = try #require(activities.json?["activities"]?.array?.first { $0["activityId"]?.string == "kicks" })
                #expect(kicks["activityState"]?.string == "inProgress" && kicks["activityRunId"]?.string == "3")
                #expect(kicks["activityRun"]?["completed"]?.number == 2 && kicks["activityRun"]?["total"]?.number == 5)
            }
            // The next response is taken as the participant's.
            let sent = try await app.processResponse(try JourneyResponses.kickResponse(participant: participantId))
            #expect(sent.status == 200, "\(sent.text)")
        }
        // The carried hash became this platform's own at the first sign-in.
        #expect(try await count("SELECT count(*)::int FROM participants WHERE password_hash LIKE 'mystudies-sha512+bcrypt$%'", platform) == 2)

        // The signed PDF came over as it was signed, kept like one signed here.
        let digest = SecureToken.hash(String(decoding: pdf, as: UTF8.self))  // the PDF is ASCII: its SHA-256
        #expect(try await count(
            "SELECT count(*)::int FROM consent_records WHERE pdf_sha256 = '\(digest)' AND version = '1.0' AND status = 'completed'", platform) == 1)
        #expect(try await count("SELECT count(*)::int FROM consent_records WHERE left_at IS NOT NULL", platform) == 1)

        // The participant whose password could not come over: the sign-in is refused as any
        // wrong password is, and a temporary password is e-mailed; with it, the app asks for a new one.
        let resetting = participants[3]
        let app = platform.app(.ios)
        app.signedOut()
        let refused = try await app.registration("login", body: ["emailId": resetting.email, "password": resetting.password])
        #expect(refused.status != 200)
        let temporary = try await platform.temporaryPassword(for: resetting.email)
        let signedIn = try await app.registration("login", body: ["emailId": resetting.email, "password": temporary])
        #expect(signedIn.status == 200, "\(signedIn.text)")
        #expect(signedIn.json?["resetPassword"]?.bool == true)
        try await invitationsCarryOn(platform)

        // The withdrawn participant's app sees the withdrawal.
        app.signedOut()
        let withdrawn = participants[2]
        app.signedIn(try await app.registration("login", body: ["emailId": withdrawn.email, "password": withdrawn.password]))
        let left = try await app.registration("studyState", method: .GET)
        #expect(left.json?["studies"]?.array?.first?["status"]?.string == "Withdrawn")
    }

    /// The invitation still open at the source enrols its person here with the token in their
    /// e-mail (typed in any case); the one spent at the source stays spent.
    static func invitationsCarryOn(_ platform: Platform) async throws {
        let app = platform.app(.android)
        let password = "Fay-Passw0rd!"
        let registered = try await app.registration("register", body: ["emailId": invitedEmail, "password": password])
        #expect(registered.status == 200, "\(registered.text)")
        app.signedIn(registered)
        let code = try await platform.verificationCode(for: invitedEmail)
        #expect(try await app.registration("verify", body: ["code": code, "emailId": invitedEmail]).status == 200)
        app.signedIn(try await app.registration("login", body: ["emailId": invitedEmail, "password": password]))
        let spent = try await app.response("validateenrollmenttoken", [("studyId", "DEMOSTUDY"), ("token", "abcd1234")], jsonBody: true)
        #expect(spent.status != 200 && spent.text.contains("Token already in use"), "\(spent.text)")
        let valid = try await app.response("validateenrollmenttoken", [("studyId", "DEMOSTUDY"), ("token", openToken.lowercased())], jsonBody: true)
        #expect(valid.status == 200, "\(valid.text)")
        let enrolled = try await app.response("enroll", [("studyId", "DEMOSTUDY"), ("token", openToken)], jsonBody: true)
        #expect(enrolled.status == 200, "\(enrolled.text)")
        let participant = try #require(enrolled.json?["data"]?["appToken"]?.string)
        #expect(try await app.registration(
            "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": participant]]]
        ).status == 200)
        // The response service's word that the token was spent reaches the moved invitation.
        _ = try await eventually("the moved invitation marked enrolled") {
            try await count("SELECT count(*)::int FROM invitations WHERE email = '\(invitedEmail)' AND enrolled_at IS NOT NULL AND user_id IS NOT NULL", platform)
        } until: { $0 == 1 }
    }

    static func count(_ sql: String, _ platform: Platform) async throws -> Int {
        try await platform.withRegistrationDatabase { client, logger in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await value in rows.decode(Int.self) { return value }
            return 0
        }
    }
}
