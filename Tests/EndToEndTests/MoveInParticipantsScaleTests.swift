import Foundation
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// A thousand participants of a MyStudies 2.x deployment moved in by the real `studystack-import`,
/// the registration service killed (SIGKILL) half way, the import run again: every count
/// reconciles exactly with the source, nothing twice; a third run changes nothing.
@Suite(.needsCluster) struct MoveInParticipantsScaleTests {
    static let total = 1000
    static let appKey = MyStudiesSourceDeployment.id("scale-app")
    static let studyKey = MyStudiesSourceDeployment.id("scale-study")
    static let siteKey = MyStudiesSourceDeployment.id("scale-site")

    /// Participant `i`: enrolled in DEMOSTUDY with two activity states; every 10th invited by the
    /// site and with a signed PDF, every 20th withdrawn. And 100 invitations still open.
    static func source(_ deployment: MyStudiesSourceDeployment) async throws {
        var batch = MyStudiesSourceDeployment.Batch()
        for i in 0..<total {
            var participant = MyStudiesSourceParticipant(
                seed: "scale-\(i)", appKey: appKey, appId: "DEMOAPP", email: "p\(i)@example.org", password: "Scale-Passw0rd-\(i)!")
            var enrolment = MyStudiesSourceParticipant.Enrolment(
                studyKey: studyKey, studyId: "DEMOSTUDY", siteKey: siteKey, participantId: MyStudiesSourceDeployment.id("scale-pid-\(i)"))
            enrolment.activities = [("kicks", "1.0", "completed", "\(i % 7 + 1)", i % 7 + 1, 0, 10), ("daily", "1.0", "inProgress", "2", 1, 1, 30)]
            if i % 10 == 0 {
                participant.invitation = .init(token: "SC\(String(format: "%06d", i))", studyKey: studyKey, siteKey: siteKey)
                enrolment.signedPDF = Data("%PDF-1.4\n% participant \(i)\n%%EOF\n".utf8)
            }
            if i % 20 == 5 {
                enrolment.status = "withdrawn"
                enrolment.withdrawnAt = "2026-11-02 14:00:00"
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

    @Test func aThousandParticipantsMoveInAndAKilledImportResumes() async throws {
        let server = try await MariaDBProcess.start()
        let deployment = try await MyStudiesSourceDeployment.create(on: server)
        try await deployment.insertApp(key: Self.appKey, appId: "DEMOAPP", name: "Demo app")
        try await deployment.insertStudy(
            key: Self.studyKey, appKey: Self.appKey, studyId: "DEMOSTUDY", siteKey: Self.siteKey,
            locationKey: MyStudiesSourceDeployment.id("scale-location"), locationName: "Main site")
        try await Self.source(deployment)

        // bcrypt at its lowest allowed cost: wrapping a thousand passwords is the import's slow step,
        // and the test is about the counts.
        try await Platform.run(registrationSettings: ["PASSWORD_BCRYPT_COST": "10"]) { platform in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("move-in-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let export = folder.appendingPathComponent("participants.json")
            _ = try await MoveInStudiesTests.command(
                ["participants", "read", "--mysql-port", String(server.port), "--mysql-user", server.readerUser, "--app-id", "DEMOAPP",
                 "--consent-files", deployment.consentBucket.path, "--out", export.path],
                environment: ["MYSTUDIES_MYSQL_PASSWORD": server.readerPassword])
            let read = try JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(contentsOf: export))
            #expect(read.accounts.count == Self.total && read.enrolments.count == Self.total && read.activityStates.count == 2 * Self.total)
            #expect(read.invitations.count == 200 && read.consents.filter { $0.pdf != nil }.count == 100)

            let arguments = [export.path, "--to", platform.registration.baseURL, "--app-id", "DEMOAPP", "--json", "--accounts-per-request", "50"]
            let admin = ["STUDYSTACK_ADMIN_TOKEN": platform.adminToken]

            // Killed once some accounts are in and before all are.
            let started = try MoveInStudiesTests.spawn(["participants", "apply"] + arguments, environment: admin)
            let before = try await eventually("the first accounts moved in", within: .seconds(600)) {
                try await Self.count("SELECT count(*)::int FROM moved_in_accounts", platform)
            } until: { $0 >= 100 }
            await platform.registration.kill()
            _ = await started.wait(within: .seconds(60))
            let atKill = try await Self.count("SELECT count(*)::int FROM moved_in_accounts", platform)
            #expect(before >= 100 && atKill < Self.total, "the import ended before it could be killed half way")
            // Nothing of an account is half written: every claimed account is whole.
            #expect(try await Self.count("SELECT count(*)::int FROM moved_in_accounts WHERE user_id IS NULL", platform) == 0)
            #expect(try await Self.count("SELECT count(*)::int FROM participants", platform) == atKill)
            let restarted = try await platform.restartRegistration()
            defer { _ = restarted.stop() }

            // Resumed: the rest, and the counts reconcile with the source.
            let resumed = try JSONDecoder().decode(
                ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
            #expect(resumed.counts.accounts == Self.total && resumed.counts.alreadyImported == atKill && resumed.counts.new == Self.total - atKill)
            let withdrawn = (0..<Self.total).filter { $0 % 20 == 5 }.count
            let expectations: [(String, Int)] = [
                ("SELECT count(*)::int FROM participants", Self.total),
                ("SELECT count(*)::int FROM moved_in_accounts WHERE user_id IS NOT NULL", Self.total),
                ("SELECT count(*)::int FROM participant_studies WHERE status = 'inProgress'", Self.total - withdrawn),
                ("SELECT count(*)::int FROM participant_studies WHERE status = 'Withdrawn'", withdrawn),
                ("SELECT count(*)::int FROM participant_studies WHERE site_id IS NOT NULL", Self.total),
                ("SELECT count(*)::int FROM participant_activities", 2 * Self.total),
                ("SELECT count(*)::int FROM consent_records", Self.total),
                ("SELECT count(*)::int FROM consent_records WHERE pdf_key IS NOT NULL", 100),
                ("SELECT count(*)::int FROM invitations", 200),
                ("SELECT count(*)::int FROM invitations WHERE enrolled_at IS NOT NULL AND user_id IS NOT NULL", 100),
                ("SELECT count(*)::int FROM study_sites", 1),
                ("SELECT count(*)::int FROM audit_events WHERE action = 'participant.moved_in'", Self.total),
            ]
            for (sql, expected) in expectations {
                #expect(try await Self.count(sql, platform) == expected, "\(sql)")
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
            #expect(responseCounts == [Self.total - withdrawn, withdrawn, 200, 100])

            // A third run changes nothing.
            let again = try JSONDecoder().decode(
                ParticipantMoveInReport.self, from: try await MoveInStudiesTests.command(["participants", "apply"] + arguments, environment: admin))
            #expect(again.counts.new == 0 && again.counts.alreadyImported == Self.total && again.counts.invitations == 0)
            #expect(try await Self.count("SELECT count(*)::int FROM participants", platform) == Self.total)
        }
    }

    static func count(_ sql: String, _ platform: Platform) async throws -> Int {
        try await MoveInParticipantsTests.count(sql, platform)
    }
}
