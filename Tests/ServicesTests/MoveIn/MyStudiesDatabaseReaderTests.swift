import Foundation
import MoveIn
import StudyModels
import Testing
import TestSupport

/// `MyStudiesDatabaseReader` against a real MariaDB holding a MyStudies 2.x deployment's three
/// databases, made by the release's own scripts and migrations and filled the way its services
/// write them (`MyStudiesSourceDeployment`).
struct MyStudiesDatabaseReaderTests {
    static let appKey = MyStudiesSourceDeployment.id("app")
    static let studyKey = MyStudiesSourceDeployment.id("study")
    static let siteKey = MyStudiesSourceDeployment.id("site")
    static let pdf = Data("%PDF-1.4\n% signed consent\n%%EOF\n".utf8)

    /// An enrolled participant with an invitation, a consent and its PDF, and activity states; a
    /// withdrawn one whose PDF never reached the bucket; one awaiting confirmation; one invited
    /// who never enrolled; and a participant of another app, who must not be read.
    static func deployment(on server: MariaDBProcess) async throws -> (MyStudiesSourceDeployment, [MyStudiesSourceParticipant]) {
        let deployment = try await MyStudiesSourceDeployment.create(on: server)
        try await deployment.insertApp(key: appKey, appId: "BTCDEV001", name: "Moving app")
        try await deployment.insertApp(key: MyStudiesSourceDeployment.id("other-app"), appId: "OTHERAPP", name: "Other app")
        try await deployment.insertStudy(
            key: studyKey, appKey: appKey, studyId: "MOVING01", siteKey: siteKey, locationKey: MyStudiesSourceDeployment.id("location"),
            locationName: "Boston clinic")

        var enrolled = MyStudiesSourceParticipant(seed: "1", appKey: appKey, appId: "BTCDEV001", email: "ana@example.org", password: "Kept-Passw0rd!")
        enrolled.invitation = .init(token: "ABCDEFGH", studyKey: studyKey, siteKey: siteKey)
        var enrolment = MyStudiesSourceParticipant.Enrolment(studyKey: studyKey, studyId: "MOVING01", siteKey: siteKey, participantId: MyStudiesSourceDeployment.id("pid-1"))
        enrolment.signedPDF = pdf
        enrolment.activities = [("daily", "1.4", "inProgress", "12", 10, 1, 30), ("intake", "1.0", "completed", "1", 1, 0, 1)]
        enrolled.enrolment = enrolment

        var withdrawn = MyStudiesSourceParticipant(seed: "2", appKey: appKey, appId: "BTCDEV001", email: "bo@example.org", password: "Other-Passw0rd!")
        var leaving = MyStudiesSourceParticipant.Enrolment(studyKey: studyKey, studyId: "MOVING01", siteKey: siteKey, participantId: MyStudiesSourceDeployment.id("pid-2"))
        leaving.status = "withdrawn"
        leaving.withdrawnAt = "2026-11-02 14:00:00"
        leaving.dataSharing = "Not Provided"
        withdrawn.enrolment = leaving

        var pending = MyStudiesSourceParticipant(seed: "3", appKey: appKey, appId: "BTCDEV001", email: "cy@example.org", password: "Pending-Passw0rd!")
        pending.detailsStatus = 4
        pending.authStatus = 1

        var invited = MyStudiesSourceParticipant(seed: "4", appKey: appKey, appId: "BTCDEV001", email: "di@example.org", password: "Invited-Passw0rd!")
        invited.invitation = .init(token: "QRSTUVWX", studyKey: studyKey, siteKey: siteKey)

        let stranger = MyStudiesSourceParticipant(
            seed: "5", appKey: MyStudiesSourceDeployment.id("other-app"), appId: "OTHERAPP", email: "ana@example.org", password: "Stranger-Passw0rd!")

        let participants = [enrolled, withdrawn, pending, invited, stranger]
        var batch = MyStudiesSourceDeployment.Batch()
        for participant in participants { try participant.add(to: &batch, bucket: deployment.consentBucket) }
        try await deployment.run(batch)
        return (deployment, participants)
    }

    static func reader(_ server: MariaDBProcess, bucket: URL?) -> MyStudiesDatabaseReader {
        MyStudiesDatabaseReader(
            address: MariaDBAddress(host: "127.0.0.1", port: server.port, user: server.readerUser, password: server.readerPassword),
            consentFiles: bucket)
    }

    @Test func readsOneAppsParticipantsAsTheServicesWroteThem() async throws {
        let server = try await MariaDBProcess.start()
        let (deployment, participants) = try await Self.deployment(on: server)
        let export = try await Self.reader(server, bucket: deployment.consentBucket).read(appId: "BTCDEV001")

        #expect(export.appId == "BTCDEV001")
        #expect(!export.source.contains(server.readerPassword))
        try #require(export.accounts.count == 4)
        let emails = export.accounts.map(\.email).sorted()
        #expect(emails == ["ana@example.org", "bo@example.org", "cy@example.org", "di@example.org"])
        let ana = try #require(export.accounts.first { $0.email == "ana@example.org" })
        #expect(ana.userId == participants[0].userId)
        #expect(ana.status == 1 && ana.authStatus == 0)
        #expect(ana.passwordHash == participants[0].passwordRecord.hash)
        #expect(ana.passwordSalt == participants[0].passwordRecord.salt)
        #expect(ana.passwordExpiresAt == 1_893_456_000_000)
        #expect(ana.locale == "en" && ana.remoteNotifications == true && ana.localNotifications == false)
        #expect(ana.createdAt == "2026-09-30 08:00:00")
        let cy = try #require(export.accounts.first { $0.email == "cy@example.org" })
        #expect(cy.status == 4 && cy.authStatus == 1 && cy.verifiedAt == nil)

        try #require(export.sites.count == 1)
        #expect(export.sites[0].siteId == Self.siteKey && export.sites[0].studyId == "MOVING01")
        #expect(export.sites[0].location == "Boston clinic" && export.sites[0].targetEnrollment == 1500 && export.sites[0].status == 1)

        try #require(export.invitations.count == 2)
        let used = try #require(export.invitations.first { $0.enrollmentToken == "ABCDEFGH" })
        #expect(used.onboardingStatus == "E" && used.tokenUsed == true && used.email == "ana@example.org" && used.siteId == Self.siteKey)
        let open = try #require(export.invitations.first { $0.enrollmentToken == "QRSTUVWX" })
        #expect(open.onboardingStatus == "I" && open.tokenUsed == false && open.tokenExpiresAt == "2026-12-30 00:00:00")

        try #require(export.enrolments.count == 2)
        let first = try #require(export.enrolments.first { $0.userId == participants[0].userId })
        #expect(first.participantId == participants[0].enrolment?.participantId)
        #expect(first.status == "enrolled" && first.enrolledAt == "2026-10-01 09:30:00" && first.withdrawnAt == nil)
        #expect(first.dataSharing == "Provided" && first.invitationId == participants[0].invitationKey && first.studyVersion == "1.0")
        #expect(first.completion == 40 && first.adherence == 80 && first.bookmarked == false && first.consented == true)
        let second = try #require(export.enrolments.first { $0.userId == participants[1].userId })
        #expect(second.status == "withdrawn" && second.withdrawnAt == "2026-11-02 14:00:00" && second.dataSharing == "Not Provided")

        try #require(export.consents.count == 2)
        let signed = try #require(export.consents.first { $0.userId == participants[0].userId })
        #expect(signed.version == "1.0" && signed.status == "completed" && signed.consentedAt == "2026-10-01 09:35:00")
        #expect(signed.pdfPath == participants[0].pdfPath)
        #expect(signed.pdf.flatMap { Data(base64Encoded: $0) } == Self.pdf)
        let unsigned = try #require(export.consents.first { $0.userId == participants[1].userId })
        #expect(unsigned.pdf == nil)
        // The withdrawn participant's signature has no PDF: said, not dropped.
        try #require(export.findings.count == 1)
        #expect(export.findings[0].at.hasPrefix("study_consent#") && export.findings[0].message.contains("no signed PDF"))

        try #require(export.activityStates.count == 2)
        let daily = try #require(export.activityStates.first { $0.activityId == "daily" })
        #expect(daily.participantId == participants[0].enrolment?.participantId && daily.studyId == "MOVING01")
        #expect(daily.activityVersion == "1.4" && daily.state == "inProgress" && daily.runId == "12")
        #expect(daily.completed == 10 && daily.missed == 1 && daily.total == 30)

        // The other app, read on its own, has only its participant.
        let other = try await Self.reader(server, bucket: deployment.consentBucket).read(appId: "OTHERAPP")
        try #require(other.accounts.count == 1)
        #expect(other.accounts[0].passwordHash == participants[4].passwordRecord.hash)
        #expect(other.enrolments.isEmpty && other.invitations.isEmpty && other.sites.isEmpty)
    }

    @Test func whatCannotBeReadIsSaidAndTheSourceIsOnlyRead() async throws {
        let server = try await MariaDBProcess.start()
        let (deployment, _) = try await Self.deployment(on: server)
        // Without the bucket copy, the PDF is named with the reason.
        let unbucketed = try await Self.reader(server, bucket: nil).read(appId: "BTCDEV001")
        try #require(unbucketed.findings.count == 2)
        #expect(unbucketed.findings.contains { $0.message.contains("no copy of it was given (--consent-files)") })
        // A path that climbs out of the bucket is refused, not followed.
        try await server.execute(
            "UPDATE study_consent SET pdfPath = '../../etc/passwd', pdfStorage = 1 WHERE pdfPath IS NOT NULL",
            database: MyStudiesSourceDeployment.participantDatastore)
        let climbing = try await Self.reader(server, bucket: deployment.consentBucket).read(appId: "BTCDEV001")
        #expect(climbing.findings.contains { $0.message.contains("is not a path inside the bucket") })
        #expect(climbing.consents.allSatisfy { $0.pdf == nil })

        // An app the source does not have, a wrong password, a database that is not there: clear errors.
        await #expect(throws: MariaDBError.self) { try await Self.reader(server, bucket: nil).read(appId: "NOSUCHAPP") }
        let wrong = MyStudiesDatabaseReader(
            address: MariaDBAddress(host: "127.0.0.1", port: server.port, user: server.readerUser, password: "wrong"), consentFiles: nil)
        let refusal = await #expect(throws: MariaDBError.self) { try await wrong.read(appId: "BTCDEV001") }
        #expect(refusal?.description.contains("Access denied") == true)
        #expect(refusal?.description.contains("wrong") == false)

        // The reader holds SELECT only, so the source cannot have been written.
        let counts = try await server.query("SELECT COUNT(*) FROM user_details", database: MyStudiesSourceDeployment.participantDatastore)
        #expect(counts == [["5"]])
    }
}
