import Foundation
import JSONText
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// A live study moved in whole, at the size a team moves over a weekend, through the real
/// `studystack-import`: the study (every step type, schedule kind and anchor of
/// docs/examples/complete-study.json, at three versions) from another platform's study-metadata
/// API; a thousand participants from a MyStudies 2.x deployment's databases, registration killed
/// (SIGKILL) half way and the import run again; fifty thousand of their stored responses, the
/// response service killed half way and the import run again. Each step has its dry run first;
/// every count reconciles exactly with the source; a last run changes nothing.
@Suite(.needsCluster) struct MoveInRehearsalTests {
    static let studyId = "MOVEDSTUDY"
    static let total = 1000
    static let responsesEach = 50
    static let appKey = MyStudiesSourceDeployment.id("rehearsal-app")
    static let studyKey = MyStudiesSourceDeployment.id("rehearsal-study")
    static let siteKey = MyStudiesSourceDeployment.id("rehearsal-site")

    static func participantId(_ i: Int) -> String { MyStudiesSourceDeployment.id("rehearsal-pid-\(i)") }

    /// Participant `i`: enrolled in the study with two activity states; every 10th invited by the
    /// site and with a signed PDF, every 20th withdrawn since. And 100 invitations still open.
    static func source(_ deployment: MyStudiesSourceDeployment) async throws {
        var batch = MyStudiesSourceDeployment.Batch()
        for i in 0..<total {
            var participant = MyStudiesSourceParticipant(
                seed: "rehearsal-\(i)", appKey: appKey, appId: "DEMOAPP", email: "p\(i)@example.org", password: "Rehearsal-Passw0rd-\(i)!")
            var enrolment = MyStudiesSourceParticipant.Enrolment(studyKey: studyKey, studyId: studyId, siteKey: siteKey, participantId: participantId(i))
            enrolment.activities = [("kicks", "1.0", "completed", "30", 30, 0, 30), ("daily", "1.2", "inProgress", "10", 10, 0, 20)]
            if i % 10 == 0 {
                participant.invitation = .init(token: "RH\(String(format: "%06d", i))", studyKey: studyKey, siteKey: siteKey)
                enrolment.signedPDF = Data("%PDF-1.4\n% participant \(i)\n%%EOF\n".utf8)
            }
            if i % 20 == 5 {
                enrolment.status = "withdrawn"
                enrolment.withdrawnAt = "2026-11-20 14:00:00"
            }
            participant.enrolment = enrolment
            try participant.add(to: &batch, bucket: deployment.consentBucket)
        }
        for i in 0..<100 {
            var invited = MyStudiesSourceParticipant(seed: "open-\(i)", appKey: appKey, appId: "DEMOAPP", email: "open\(i)@example.org", password: "-")
            invited.invitation = .init(token: "OP\(String(format: "%06d", i))", studyKey: studyKey, siteKey: siteKey)
            var only = MyStudiesSourceDeployment.Batch()
            try invited.add(to: &only, bucket: deployment.consentBucket)
            batch.participantDatastore += only.participantDatastore.filter { $0.contains("participant_registry_site") }
        }
        try await deployment.run(batch)
    }

    /// The example study as MOVEDSTUDY, its dates in the autumn the responses were given in,
    /// launched, then `daily` changed twice: three versions.
    static func publishSource(on source: Platform) async throws {
        let example = try String(contentsOf: ServiceProcess.packageRoot.appendingPathComponent("docs/examples/complete-study.json"), encoding: .utf8)
            .replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "\#(studyId)""#)
            .replacingOccurrences(of: "2027-01-04", with: "2026-09-28").replacingOccurrences(of: "2027-01-15", with: "2026-09-15")
        #expect(try await source.admin.send(.PUT, "/admin/v1/studies/\(studyId)/draft", raw: Data(example.utf8)).status == 201)
        #expect(try await source.admin.send(.POST, "/admin/v1/studies/\(studyId)/launch").status == 200)
        let question = #""title": {"en": "How well did you sleep?""#
        #expect(example.contains(question))
        for update in 1...2 {
            let changed = example.replacingOccurrences(of: question, with: #""title": {"en": "How well did you sleep? (\#(update))""#)
            #expect(try await source.admin.send(.PUT, "/admin/v1/studies/\(studyId)/draft", raw: Data(changed.utf8)).status == 200)
            #expect(try await source.admin.send(.POST, "/admin/v1/studies/\(studyId)/publish-updates").status == 200)
        }
    }

    /// Response `n` of participant `i` as MyStudies 2.x's response server stores it (the line
    /// `responses read` writes): ten daily check-ins across the three versions, thirty kick counts,
    /// ten weekly surveys, from 2026-10-01 to 2026-12-03, each received four minutes after it ended.
    static func stored(_ i: Int, _ n: Int) -> String {
        let (activity, run, version, day, hour): (String, Int, String, Int, Int)
        switch n {
        case 0..<10: (activity, run, version, day, hour) = ("daily", n + 1, n < 4 ? "1.0" : n < 7 ? "1.1" : "1.2", n / 2, n % 2 == 0 ? 8 : 20)
        case 10..<40: (activity, run, version, day, hour) = ("kicks", n - 9, "1.0", n - 10, 19)
        default: (activity, run, version, day, hour) = ("weekly", n - 39, "1.0", 7 * (n - 40), 9)
        }
        // Days from 2026-10-01 (UTC-4 through 2026-10-31; no response falls on 11-01's change).
        let date = GregorianDays.dateText(GregorianDays.days(year: 2026, month: 10, day: 1) + day)
        let offset = date < "2026-11-01" ? "-0400" : "-0500"
        let at = { (minute: Int) in String(format: "%@T%02d:%02d:00.000%@", date, hour, minute, offset) }
        func step(_ type: String, _ key: String, _ value: String, skipped: Bool = false) -> String {
            #"{"resultType": "\#(type)", "key": "\#(key)", "startTime": "\#(at(0))", "endTime": "\#(at(1))", "skipped": \#(skipped), "value": \#(value)}"#
        }
        let results: [String]
        switch activity {
        case "daily":
            results = [
                step("scale", "sleepQuality", String((i + n) % 11)), step("continuousScale", "energy", "0.\(n)5"), step("textScale", "mood", "\"neutral\""),
                step("valuePicker", "naps", "\"1\""), step("imageChoice", "weather", "\"sun\""), step("boolean", "caffeine", "false"),
                step("numeric", "caffeineCups", "null", skipped: true), step("textChoice", "activities", #"["read", "screens"]"#),
                step("timeOfDay", "bedtime", "\"22:30:00\""), step("date", "lastAlcohol", "\"2026-09-26T19:00:00.000-0400\""),
                step("text", "notes", "\"participant \(i), check-in \(n)\""), step("email", "contactEmail", "null", skipped: true),
                step("timeInterval", "timeToSleep", "600"), step("height", "height", "170"), step("location", "place", "\"40.7128,-74.0060\""),
                step("grouped", "symptoms", "[[\(step("text", "symptom", "\"headache\"")), \(step("scale", "severity", "2"))]]"),
            ]
        case "kicks":
            results = [step("fetalKickCounter", "counter", "[\(step("numeric", "duration", "600")), \(step("numeric", "count", String(10 + (i + n) % 7)))]")]
        default:
            results = [step("numeric", "hoursSlept", "7.5")]
        }
        // Received four minutes after its last answer ended (at minute 1 of its hour).
        let local = Int64(GregorianDays.days(year: 2026, month: 10, day: 1) + day) * 86_400 + Int64(hour * 3_600 + 60)
        let received = (local + (offset == "-0400" ? 4 : 5) * 3_600) * 1_000 + 4 * 60_000
        return #"""
            {"studyId": "\#(studyId)", "document": "projects/rehearsal/databases/(default)/documents/\#(studyId)-RESPONSES/\#(studyId)/Activities/\#(i)-\#(n)", "fields": {"studyId": "\#(studyId)", "studyVersion": "1.2", "activityId": "\#(activity)", "activityRunId": "\#(run)", "name": "\#(activity)", "version": "\#(version)", "results": [\#(results.joined(separator: ", "))], "participantId": "\#(participantId(i))", "siteId": "site-1", "sharingConsent": "Provided", "createdTimestamp": "\#(received)"}}
            """#
    }

    @Test func aLiveStudyMovesInWholeAndKilledImportsResume() async throws {
        let server = try await MariaDBProcess.start()
        let deployment = try await MyStudiesSourceDeployment.create(on: server)
        try await deployment.insertApp(key: Self.appKey, appId: "DEMOAPP", name: "Demo app")
        try await deployment.insertStudy(
            key: Self.studyKey, appKey: Self.appKey, studyId: Self.studyId, siteKey: Self.siteKey,
            locationKey: MyStudiesSourceDeployment.id("rehearsal-location"), locationName: "Main site")
        try await Self.source(deployment)

        try await Platform.run { source in
            try await Self.publishSource(on: source)
            // bcrypt at its lowest allowed cost: wrapping a thousand passwords is the slow step, and
            // the test is about the counts.
            try await Platform.run(registrationSettings: ["PASSWORD_BCRYPT_COST": "10"]) { platform in
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearsal-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                let admin = ["STUDYSTACK_ADMIN_TOKEN": platform.adminToken]
                try await Self.studiesMoveIn(from: source, to: platform, folder: folder, admin: admin)
                let registration = try await Self.participantsMoveIn(server: server, deployment: deployment, platform: platform, folder: folder, admin: admin)
                defer { _ = registration.stop() }
                try await Self.responsesMoveIn(platform: platform, folder: folder, admin: admin)
            }
        }
    }

    /// The study, read from the source's API: the dry run, then the import, three versions.
    static func studiesMoveIn(from source: Platform, to platform: Platform, folder: URL, admin: [String: String]) async throws {
        let export = folder.appendingPathComponent("studies.json").path
        _ = try await MoveInStudiesTests.command(
            ["studies", "read", "--from", source.metadata.baseURL + "/StudyMetaData", "--app-id", "DEMOAPP", "--org-id", "DEMOORG",
             "--study", studyId, "--out", export],
            environment: ["MYSTUDIES_APP_CREDENTIAL": source.iosCredential])
        let arguments = [export, "--to", platform.metadata.baseURL, "--app-id", "DEMOAPP", "--time-zone", "America/New_York", "--json"]
        let planned = try JSONDecoder().decode(StudyMoveInReport.self, from: try await MoveInStudiesTests.command(["studies", "plan"] + arguments, environment: admin))
        let study = try #require(planned.studies.first)
        #expect(planned.dryRun && study.versions == ["moved-1", "moved-2", "1.2"] && study.counts.activities == 9 && study.counts.notImported == 0)
        #expect(study.activities.first { $0.activityId == "daily" }?.versions == ["1.0", "1.1", "1.2"])
        let imported = try JSONDecoder().decode(StudyMoveInReport.self, from: try await MoveInStudiesTests.command(["studies", "apply"] + arguments, environment: admin))
        #expect(imported.studies.first?.versionsHere == 3)
    }

    /// The thousand participants: the dry run, the import with registration killed half way, the
    /// import again; the counts reconcile with the source. Returns the registration service started
    /// again, which the caller stops.
    static func participantsMoveIn(
        server: MariaDBProcess, deployment: MyStudiesSourceDeployment, platform: Platform, folder: URL, admin: [String: String]
    ) async throws -> ServiceProcess {
        let export = folder.appendingPathComponent("participants.json")
        _ = try await MoveInStudiesTests.command(
            ["participants", "read", "--mysql-port", String(server.port), "--mysql-user", server.readerUser, "--app-id", "DEMOAPP",
             "--consent-files", deployment.consentBucket.path, "--out", export.path],
            environment: ["MYSTUDIES_MYSQL_PASSWORD": server.readerPassword])
        let read = try JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(contentsOf: export))
        #expect(read.accounts.count == total && read.enrolments.count == total && read.activityStates.count == 2 * total)
        #expect(read.invitations.count == 200 && read.consents.filter { $0.pdf != nil }.count == 100)

        let arguments = [export.path, "--to", platform.registration.baseURL, "--app-id", "DEMOAPP", "--json", "--accounts-per-request", "50"]
        let planned = try JSONDecoder().decode(
            ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "plan"] + arguments, environment: admin))
        #expect(planned.dryRun && planned.counts.accounts == total && planned.counts.new == total && planned.counts.enrolments == total - total / 20)
        #expect(try await count("SELECT count(*)::int FROM participants", platform) == 0)

        // Killed once some accounts are in and before all are.
        let started = try MoveInStudiesTests.spawn(["participants", "apply"] + arguments, environment: admin)
        let before = try await eventually("the first accounts moved in", within: .seconds(600)) {
            try await count("SELECT count(*)::int FROM moved_in_accounts", platform)
        } until: { $0 >= 100 }
        // The command and registration both (SIGKILL), as when the machine running the import
        // goes down: a command left running would wait for registration to come back and go on.
        await started.kill()
        await platform.registration.kill()
        _ = await started.wait(within: .seconds(60))
        let atKill = try await count("SELECT count(*)::int FROM moved_in_accounts", platform)
        #expect(before >= 100 && atKill < total, "the import ended before it could be killed half way")
        // Nothing of an account is half written: every claimed account is whole.
        #expect(try await count("SELECT count(*)::int FROM moved_in_accounts WHERE user_id IS NULL", platform) == 0)
        #expect(try await count("SELECT count(*)::int FROM participants", platform) == atKill)
        let restarted = try await platform.restartRegistration()

        let resumed = try JSONDecoder().decode(
            ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
        #expect(resumed.counts.accounts == total && resumed.counts.alreadyImported == atKill && resumed.counts.new == total - atKill)
        let withdrawn = (0..<total).filter { $0 % 20 == 5 }.count
        let expectations: [(String, Int)] = [
            ("SELECT count(*)::int FROM participants", total),
            ("SELECT count(*)::int FROM moved_in_accounts WHERE user_id IS NOT NULL", total),
            ("SELECT count(*)::int FROM participant_studies WHERE status = 'inProgress'", total - withdrawn),
            ("SELECT count(*)::int FROM participant_studies WHERE status = 'Withdrawn'", withdrawn),
            ("SELECT count(*)::int FROM participant_studies WHERE site_id IS NOT NULL", total),
            ("SELECT count(*)::int FROM participant_activities", 2 * total),
            ("SELECT count(*)::int FROM consent_records", total),
            ("SELECT count(*)::int FROM consent_records WHERE pdf_key IS NOT NULL", 100),
            ("SELECT count(*)::int FROM invitations", 200),
            ("SELECT count(*)::int FROM invitations WHERE enrolled_at IS NOT NULL AND user_id IS NOT NULL", 100),
            ("SELECT count(*)::int FROM study_sites", 1),
            ("SELECT count(*)::int FROM audit_events WHERE action = 'participant.moved_in'", total),
        ]
        try #require(expectations.count == 12)
        for (sql, expected) in expectations {
            #expect(try await count(sql, platform) == expected, "\(sql)")
        }
        // One file per signed PDF: the killed run's files were written again, not left beside.
        let files = try FileManager.default.contentsOfDirectory(atPath: platform.consentDirectory.path).filter { $0.hasSuffix(".pdf.sealed") }
        #expect(files.count == 100)
        let responseCounts = try await platform.withResponseDatabase { client, logger in
            let rows = try await client.query(
                """
                SELECT (SELECT count(*)::int FROM participants WHERE status = 'enrolled'),
                       (SELECT count(*)::int FROM participants WHERE status = 'withdrawn'),
                       (SELECT count(*)::int FROM enrollment_tokens WHERE invitation_id IS NOT NULL),
                       (SELECT count(*)::int FROM enrollment_tokens WHERE invitation_id IS NOT NULL AND participant_id IS NOT NULL)
                """, logger: logger)
            for try await row in rows.decode((Int, Int, Int, Int).self) { return [row.0, row.1, row.2, row.3] }
            return []
        }
        #expect(responseCounts == [total - withdrawn, withdrawn, 200, 100])
        let again = try JSONDecoder().decode(
            ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
        #expect(again.counts.new == 0 && again.counts.alreadyImported == total && again.counts.invitations == 0)
        return restarted
    }

    /// Fifty thousand stored responses: the dry run, the import with the response service killed
    /// half way, the import again; each stored once, processed into the study's tables, followed
    /// by registration as runs; a last run changes nothing.
    static func responsesMoveIn(platform: Platform, folder: URL, admin: [String: String]) async throws {
        let file = folder.appendingPathComponent("responses.jsonl")
        var lines = ""
        lines.reserveCapacity(total * responsesEach * 2_400)
        for i in 0..<total {
            for n in 0..<responsesEach { lines += stored(i, n) + "\n" }
        }
        try Data(lines.utf8).write(to: file)
        let expected = total * responsesEach
        let arguments = [file.path, "--to", platform.response.baseURL, "--json"]
        let decode = { (data: Data) throws -> ResponseMoveInReport in try #require(try JSONDecoder().decode([ResponseMoveInReport].self, from: data).first) }

        let planned = try decode(try await MoveInStudiesTests.command(["responses", "plan"] + arguments, environment: admin))
        #expect(planned.dryRun && planned.counts.read == expected && planned.counts.new == expected, "\(planned.counts)")
        #expect(planned.counts.unknownParticipant == 0 && planned.counts.notImported == 0 && planned.findings.isEmpty, "\(planned.findings.prefix(3))")
        #expect(try await responseCount("SELECT count(*)::int FROM responses", platform) == 0)

        // Killed once some parts are in and before all are: watched on one connection, often,
        // since the parts go in quickly.
        let started = try MoveInStudiesTests.spawn(["responses", "apply"] + arguments, environment: admin)
        let before = try await platform.withResponseDatabase { client, logger in
            try await eventually("the first parts moved in", within: .seconds(600), poll: .milliseconds(20)) {
                var stored = 0
                for try await value in try await client.query("SELECT count(*)::int FROM responses", logger: logger).decode(Int.self) { stored = value }
                return stored
            } until: { $0 >= 5_000 }
        }
        // The command and the response service both (SIGKILL): a command left running waits for
        // the service to come back and goes on (its HTTP client retries the connection).
        await started.kill()
        let restarted = try await platform.restartResponse(killing: true)
        defer { _ = restarted.stop() }
        _ = await started.wait(within: .seconds(60))
        let atKill = try await responseCount("SELECT count(*)::int FROM responses", platform)
        #expect(before >= 5_000 && atKill < expected, "the import ended before it could be killed half way")
        // Whole parts only: a part is one transaction.
        #expect(atKill % 500 == 0, "\(atKill) stored: a part was cut")

        let resumed = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(resumed.counts.read == expected && resumed.counts.alreadyImported == atKill && resumed.counts.new == expected - atKill)
        let reconciled: [(String, Int)] = [
            ("SELECT count(*)::int FROM responses", expected),
            ("SELECT count(DISTINCT fingerprint)::int FROM responses", expected),
            ("SELECT count(DISTINCT participant_id)::int FROM responses", total),
            ("SELECT count(*)::int FROM responses WHERE activity_id = 'daily'", total * 10),
            ("SELECT count(*)::int FROM responses WHERE activity_id = 'daily' AND activity_version = '1.1'", total * 3),
            ("SELECT count(*)::int FROM responses WHERE activity_id = 'kicks'", total * 30),
            ("SELECT count(*)::int FROM responses WHERE activity_id = 'weekly'", total * 10),
        ]
        try #require(reconciled.count == 7)
        for (sql, value) in reconciled {
            #expect(try await responseCount(sql, platform) == value, "\(sql)")
        }
        // Processed into the study's tables like responses that arrived here.
        let processed = try await eventually("the moved responses processed", within: .seconds(900)) {
            try await responseCount("SELECT count(*)::int FROM responses WHERE status <> 'pending'", platform)
        } until: { $0 == expected }
        #expect(processed == expected)
        #expect(try await responseCount("SELECT count(*)::int FROM responses WHERE status = 'processed'", platform) == expected)
        // Followed by registration as runs of their participants.
        _ = try await eventually("the moved responses counted as runs", within: .seconds(900)) {
            try await count("SELECT count(*)::int FROM response_arrivals WHERE study_id = '\(studyId)'", platform)
        } until: { $0 == expected }

        // A last run changes nothing.
        let movedIn = "SELECT count(*)::int FROM audit_events WHERE action = 'responses.moved_in'"
        let auditBefore = try await responseCount(movedIn, platform)
        let again = try decode(try await MoveInStudiesTests.command(["responses", "apply"] + arguments, environment: admin))
        #expect(again.counts.new == 0 && again.counts.alreadyImported == expected)
        #expect(try await responseCount("SELECT count(*)::int FROM responses", platform) == expected)
        #expect(try await responseCount(movedIn, platform) == auditBefore && auditBefore > 0)
    }

    static func count(_ sql: String, _ platform: Platform) async throws -> Int {
        try await MoveInParticipantsTests.count(sql, platform)
    }

    static func responseCount(_ sql: String, _ platform: Platform) async throws -> Int {
        try await platform.withResponseDatabase { client, logger in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await value in rows.decode(Int.self) { return value }
            return -1
        }
    }
}
