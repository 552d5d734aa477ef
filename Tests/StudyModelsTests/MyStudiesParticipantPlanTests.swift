import Foundation
import JSONText
import StudyModels
import Testing

/// `MyStudiesParticipantPlan.read`: what a MyStudies 2.x deployment's participant rows become
/// here, and what is said about what does not come over.
struct MyStudiesParticipantPlanTests {
    static let salt = String(repeating: "ab", count: 64)
    static let digest = String(repeating: "0f", count: 64)

    static func export(zone: String = "America/New_York") -> MyStudiesParticipantExport {
        var export = MyStudiesParticipantExport(source: "mysql://reader@db", readAt: "2026-12-05T00:00:00Z", appId: "APP", databaseTimeZone: zone)
        export.accounts = [
            .init(userId: "u1", email: " Ana@Example.org ", status: 1, authStatus: 0, locale: "es", createdAt: "2026-09-30 08:00:00",
                  passwordHash: digest, passwordSalt: salt, passwordExpiresAt: 1_893_456_000_000, remoteNotifications: false,
                  reminderLeadTime: "09:30"),
            .init(userId: "u2", email: "bo@example.org", status: 4, authStatus: 1, passwordHash: digest, passwordSalt: salt),
            .init(userId: "u3", email: "cy@example.org", status: 1, authStatus: 3, passwordHash: digest, passwordSalt: salt),
            .init(userId: "u4", email: "ana@example.ORG", status: 1, authStatus: 0, passwordHash: digest, passwordSalt: salt),
            .init(userId: "u5", email: "not an address", status: 1),
            .init(userId: "u6", email: "di@example.org", status: 0, authStatus: 4, passwordHash: digest, passwordSalt: salt),
            .init(userId: "u7", email: "ed@example.org", status: 1, authStatus: 0, passwordHash: "plain", passwordSalt: salt),
        ]
        export.enrolments = [
            .init(userId: "u1", studyId: "HERE", participantId: "pid-1", status: "enrolled", enrolledAt: "2026-03-08 02:30:00",
                  dataSharing: "Provided", bookmarked: true, completion: 140, adherence: -3),
            .init(userId: "u1", studyId: "GONE", participantId: "pid-2", status: "enrolled"),
            .init(userId: "u2", studyId: "HERE", participantId: "pid-1", status: "withdrawn", withdrawnAt: "2026-11-02 14:00:00.5"),
            .init(userId: "u3", studyId: "HERE", status: "paused"),
        ]
        export.consents = [
            .init(consentId: "c1", userId: "u1", studyId: "HERE", version: "1.1", status: "completed", consentedAt: "2026-03-08 03:00:00",
                  dataSharing: "Not Provided", pdf: Data("%PDF-1.4".utf8).base64EncodedString()),
            .init(consentId: "c2", userId: "u1", studyId: "HERE", version: nil, status: "completed"),
            .init(consentId: "c3", userId: "u1", studyId: "HERE", version: "1.0", status: "completed", pdf: "not base64!"),
        ]
        export.activityStates = [
            .init(participantId: "pid-1", studyId: "HERE", activityId: "daily", activityVersion: "1.2", state: "inProgress", runId: "4",
                  completed: 3, missed: -1, total: 9),
            .init(participantId: "pid-1", studyId: "HERE", activityId: "odd", state: "sleeping"),
        ]
        return export
    }

    @Test func accountsComeOverWithTheirPasswordsWhereTheHashCanBeChecked() throws {
        let plan = MyStudiesParticipantPlan.read(Self.export(), studiesHere: ["HERE"])
        try #require(plan.accounts.count == 5)
        #expect(plan.accounts.map(\.sourceUserId) == ["u1", "u2", "u3", "u6", "u7"])
        let ana = plan.accounts[0]
        #expect(ana.email == "Ana@Example.org" && ana.verified && !ana.disabled)
        #expect(ana.password == .carried(digest: Self.digest, salt: Self.salt))
        #expect(ana.passwordExpiresAt == Date(timeIntervalSince1970: 1_893_456_000))
        #expect(ana.settings.locale == "es" && ana.settings.reminderLeadTime == "09:30" && !ana.settings.remoteNotifications)
        // Awaiting confirmation: not verified, the password still carried.
        #expect(!plan.accounts[1].verified && plan.accounts[1].password == .carried(digest: Self.digest, salt: Self.salt))
        // A temporary password's hash is not the participant's own.
        guard case .reset = plan.accounts[2].password else { Issue.record("a temporary password was carried"); return }
        // Deleted at the source: kept, disabled, no password.
        #expect(plan.accounts[3].disabled)
        guard case .reset = plan.accounts[4].password else { Issue.record("a hash of another scheme was carried"); return }
        // The same address in another case, and no address: said, not imported.
        #expect(plan.findings.contains { $0.at == "user_details#u4" && $0.effect == .notImported && $0.message.contains("ana@example.ORG") })
        #expect(plan.findings.contains { $0.at == "user_details#u5" && $0.effect == .notImported })
        #expect(plan.findings.contains { $0.at == "users#u3" && $0.message.contains("temporary password") })
    }

    @Test func standingsSignaturesAndActivityStatesAreReadInTheDatabasesZone() throws {
        let plan = MyStudiesParticipantPlan.read(Self.export(), studiesHere: ["HERE"])
        let ana = try #require(plan.accounts.first)
        try #require(ana.studies.count == 1)
        let study = ana.studies[0]
        #expect(study.studyId == "HERE" && study.status == "inProgress" && study.participantId == "pid-1")
        // 02:30 is skipped in New York on 2026-03-08: read as 03:30 EDT, 07:30 UTC.
        #expect(study.enrolledAt == ISO8601DateFormatter().date(from: "2026-03-08T07:30:00Z"))
        #expect(study.sharing == "Provided" && study.bookmarked && study.completion == 100 && study.adherence == 0)
        // The signature without a version is not imported; the one whose PDF is not base64 comes without it.
        try #require(study.consents.count == 2)
        #expect(study.consents[0].version == "1.1" && study.consents[0].sharing == "Not Provided" && study.consents[0].pdf == Data("%PDF-1.4".utf8))
        #expect(study.consents[0].signedAt == ISO8601DateFormatter().date(from: "2026-03-08T07:00:00Z"))
        #expect(study.consents[1].pdf == nil)
        #expect(plan.findings.contains { $0.at == "study_consent#c2" && $0.effect == .notImported })
        #expect(plan.findings.contains { $0.at == "study_consent#c3" && $0.effect == .changed })
        try #require(study.activities.count == 1)
        let daily = study.activities[0]
        #expect(daily.activityId == "daily" && daily.version == "1.2" && daily.state == "inProgress" && daily.runId == "4")
        #expect(!daily.bookmarked && daily.completed == 3 && daily.missed == 0 && daily.total == 9)
        #expect(plan.findings.contains { $0.at == "participant_activities#pid-1/odd" && $0.effect == .notImported })
        // A study not moved in first, a participant id another enrolment has, a status MyStudies never writes.
        #expect(plan.findings.contains { $0.studyId == "GONE" && $0.message.contains("move the studies in first") })
        let bo = plan.accounts[1].studies
        #expect(bo.count == 1 && bo[0].status == "Withdrawn" && bo[0].participantId == nil)
        #expect(bo[0].withdrawnAt == ISO8601DateFormatter().date(from: "2026-11-02T19:00:00Z")?.addingTimeInterval(0.5))
        #expect(plan.accounts[2].studies.isEmpty && plan.findings.contains { $0.message.contains("paused") })
    }

    @Test func aZoneThatIsNotOneImportsNothing() {
        let plan = MyStudiesParticipantPlan.read(Self.export(zone: "Mars/Olympus"), studiesHere: ["HERE"])
        #expect(plan.accounts.isEmpty)
        #expect(plan.findings.contains { $0.at == "databaseTimeZone" })
    }

    @Test func oddTimesAreRefusedNotGuessed() {
        var export = Self.export(zone: "UTC")
        export.enrolments[0].enrolledAt = "2026-02-30 10:00:00"
        export.consents[0].consentedAt = "2026-03-08 03:00:00.x"
        let plan = MyStudiesParticipantPlan.read(export, studiesHere: ["HERE"])
        #expect(plan.accounts.first?.studies.first?.enrolledAt == nil)
        #expect(plan.accounts.first?.studies.first?.consents.first?.signedAt == nil)
    }
}

/// Sites and invitations: names unique in their study, tokens as typed, each invitation's state.
struct MyStudiesParticipantPlanInvitationTests {
    static func export() -> MyStudiesParticipantExport {
        var export = MyStudiesParticipantExport(source: "mysql://reader@db", readAt: "2026-12-05T00:00:00Z", appId: "APP", databaseTimeZone: "UTC")
        export.accounts = [.init(userId: "u1", email: "ana@example.org", status: 1, authStatus: 0)]
        export.enrolments = [.init(userId: "u1", studyId: "HERE", participantId: "pid-1", siteId: "s1", invitationId: "i1", status: "enrolled", enrolledAt: "2026-10-01 09:30:00")]
        export.sites = [
            .init(siteId: "s1", studyId: "HERE", name: "Boston", location: "Boston clinic", status: 1, targetEnrollment: 100),
            .init(siteId: "s2", studyId: "HERE", name: "boston", status: 0, targetEnrollment: 0),
            .init(siteId: "s3", studyId: "HERE", name: nil, location: nil),
            .init(siteId: "s4", studyId: "GONE", name: "Closed"),
        ]
        export.invitations = [
            .init(invitationId: "i1", studyId: "HERE", siteId: "s1", email: "ana@example.org", enrollmentToken: "AbCd1234", tokenExpiresAt: "2026-12-30 00:00:00", tokenUsed: true, onboardingStatus: "E", invitedAt: "2026-09-29 12:00:00", invitationCount: 2),
            .init(invitationId: "i2", studyId: "HERE", siteId: "s1", email: " bo@example.org ", enrollmentToken: " zz9yx8wv ", tokenExpiresAt: "2026-12-30 00:00:00", onboardingStatus: "I", invitedAt: "2026-09-29 12:00:00"),
            .init(invitationId: "i3", studyId: "HERE", siteId: "s1", email: "cy@example.org", enrollmentToken: "QQQQ1111", onboardingStatus: "D", invitedAt: "2026-09-29 12:00:00", disabledAt: "2026-10-02 10:00:00"),
            .init(invitationId: "i4", studyId: "HERE", siteId: "s1", email: "di@example.org", enrollmentToken: "NEWNEW11", onboardingStatus: "N"),
            .init(invitationId: "i5", studyId: "HERE", siteId: "s1", email: "ed@example.org", enrollmentToken: "ZZ9YX8WV", onboardingStatus: "I", invitedAt: "2026-09-29 12:00:00"),
            .init(invitationId: "i6", studyId: "HERE", siteId: "s1", email: "bo@example.org", enrollmentToken: "FRESH123", onboardingStatus: "I", invitedAt: "2026-09-29 12:00:00"),
            .init(invitationId: "i7", studyId: "HERE", siteId: "s1", email: "fy@example.org", enrollmentToken: "USED1234", tokenUsed: true, onboardingStatus: "E", invitedAt: "2026-09-29 12:00:00"),
            .init(invitationId: "i8", studyId: "HERE", email: "gi@example.org", enrollmentToken: "bad token!", onboardingStatus: "I", invitedAt: "2026-09-29 12:00:00"),
        ]
        return export
    }

    @Test func sitesAreNamedUniquelyInTheirStudy() throws {
        let plan = MyStudiesParticipantPlan.read(Self.export(), studiesHere: ["HERE"])
        try #require(plan.sites.count == 3)
        #expect(plan.sites.map(\.name) == ["Boston", "boston (2)", "Site 3"])
        #expect(plan.sites[0].location == "Boston clinic" && plan.sites[0].targetEnrollment == 100 && !plan.sites[0].decommissioned)
        #expect(plan.sites[1].decommissioned && plan.sites[1].targetEnrollment == nil)
        #expect(plan.findings.contains { $0.at == "sites#s2" && $0.effect == .changed })
        #expect(plan.findings.contains { $0.at == "sites#s4" && $0.studyId == "GONE" && $0.effect == .notImported })
        #expect(plan.accounts.first?.studies.first?.sourceSiteId == "s1")
    }

    @Test func invitationsKeepTheirTokensAndTheirState() throws {
        let plan = MyStudiesParticipantPlan.read(Self.export(), studiesHere: ["HERE"])
        try #require(plan.invitations.count == 3)
        let spent = plan.invitations[0]
        #expect(spent.sourceId == "i1" && spent.token == "ABCD1234" && spent.sentCount == 2)
        #expect(spent.state == .enrolled(participantId: "pid-1", at: ISO8601DateFormatter().date(from: "2026-10-01T09:30:00Z")))
        let open = plan.invitations[1]
        #expect(open.sourceId == "i2" && open.email == "bo@example.org" && open.token == "ZZ9YX8WV" && open.state == .open)
        #expect(open.expiresAt == ISO8601DateFormatter().date(from: "2026-12-30T00:00:00Z"))
        #expect(plan.invitations[2].state == .revoked(at: ISO8601DateFormatter().date(from: "2026-10-02T10:00:00Z")))
        // Never invited, a token another invitation holds, a second open invitation for an
        // address, a spent token whose enrolment is not here, a token that is not letters and digits.
        for (id, words) in [("i4", "never invited"), ("i5", "another invitation's"), ("i6", "another open invitation"),
                            ("i7", "not in the export"), ("i8", "not letters and digits")] {
            #expect(plan.findings.contains { $0.at == "participant_registry_site#\(id)" && $0.message.contains(words) }, "\(id)")
        }
    }
}
