import Foundation
import InMemoryPorts
import Logging
import RegistrationCore
import ServiceKit
import StudyModels
import Synchronization
import Testing

/// `Invitations` against in-memory invitations, tokens, sites and study-metadata: a CSV invited
/// all or nothing with every line's problem, the e-mail with its token and QR code, resends held
/// to their limits, revoking, the response service's word that a token was spent, and that
/// nothing is kept, and no token left usable, when anything refuses.
@Suite struct InvitationRulesTests {
    final class Clock: Sendable {
        private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    /// study-metadata's word on the studies, as a list.
    struct Standings: StudySchedules {
        var standings: [String: StudyStanding]
        func standing(of studyId: String, logger: Logger) async throws -> StudyStanding? { standings[studyId] }
        func schedule(of studyId: String, logger: Logger) async throws -> StudySchedule? { nil }
    }

    struct Sites: SiteReferences {
        static let clinic = SiteStore.Reference(id: UUID(), name: "Clinic", decommissioned: false)
        static let closed = SiteStore.Reference(id: UUID(), name: "Old ward", decommissioned: true)
        func references(studyId: String) async throws -> [String: SiteStore.Reference] {
            ["clinic": Self.clinic, "old ward": Self.closed]
        }
    }

    struct Apps: AppDirectory {
        func app(appId: String) async throws -> AppDefinition? {
            AppDefinition(appId: appId, orgId: "ORG", name: "Sleep", kind: .standalone)
        }

        func app(appId: String, orgId: String) async throws -> AppDefinition? {
            orgId == "ORG" ? try await app(appId: appId) : nil
        }
    }

    struct Fixture {
        let clock = Clock()
        let store: InMemoryInvitations
        let tokens = InMemoryInvitationTokens()
        let invitations: Invitations

        init(status: StudyEvent.Status = .active) {
            let clock = clock
            store = InMemoryInvitations(now: { clock.now })
            invitations = Invitations(
                transactions: store, store: store, sites: Sites(), tokens: tokens,
                studies: Standings(standings: ["SLEEP": StudyStanding(studyId: "SLEEP", appId: "APP", status: status, name: "Sleep well")]),
                apps: Apps(), defaultFrom: "StudyStack <no-reply@example.org>", validFor: .seconds(14 * 86_400),
                logger: Logger(label: "test"))
        }

        func invite(_ lines: [(String, String?)]) async throws -> [Invitation] {
            try await invitations.invite(
                lines.enumerated().map { Invitations.Wanted(line: $0.offset + 2, email: $0.element.0, site: $0.element.1, properties: [:]) },
                studyId: "SLEEP", actor: "ana@example.org", now: clock.now)
        }

        func failure(_ body: () async throws -> Void) async -> Invitations.Failure? {
            do {
                try await body()
                return nil
            } catch {
                return error as? Invitations.Failure
            }
        }
    }

    @Test func eachInviteeGetsTheirOwnTokenByMailWithItsQRCode() async throws {
        let fixture = Fixture()
        let invited = try await fixture.invite([("ana@example.org", nil), ("ben@example.org", "clinic"), ("cy@example.org", nil)])
        #expect(invited.count == 3)
        #expect(invited.map(\.state) == ["invited", "invited", "invited"])
        #expect(invited[1].siteId == Sites.clinic.id.uuidString.lowercased())
        let state = fixture.store.state
        #expect(state.mail.count == 3)
        #expect(Set(state.invitations.values.map(\.token)).count == 3, "one token each")
        for mail in state.mail {
            let row = try #require(state.invitations.values.first { $0.email == mail.message.to })
            #expect(mail.message.text.contains(row.token))
            #expect(mail.message.attachments?.first?.contentType == "image/png")
            #expect(mail.message.subject.contains("Sleep well"))
        }
        #expect(state.events.map(\.action) == ["invitations.created"])
        #expect(state.events.first?.details["count"] == "3")
    }

    @Test func aCSVWithProblemsIsRefusedWholeWithEachLinesProblem() async throws {
        let fixture = Fixture()
        try await fixture.invite([("ana@example.org", nil)])
        let refused = await fixture.failure {
            _ = try await fixture.invite([
                ("ben@example.org", nil), ("not an address", nil), ("Ben@Example.org", nil), ("ANA@example.org", nil),
                ("cy@example.org", "Mars"), ("di@example.org", "old ward"), ("ed@example.org\r\nBcc: x@example.org", nil),
            ])
        }
        guard case .refused(let problems) = refused else {
            Issue.record("not refused: \(String(describing: refused))")
            return
        }
        #expect(problems.map(\.line) == [3, 4, 5, 6, 7, 8])
        #expect(problems.map(\.field) == ["email", "email", "email", "site", "site", "email"])
        #expect(fixture.store.state.invitations.count == 1)
        #expect(fixture.store.state.mail.count == 1)
        #expect(fixture.tokens.issued == 1, "no token is asked for a refused CSV")
    }

    @Test func nobodyOrTooManyIsRefused() async throws {
        let fixture = Fixture()
        #expect(await fixture.failure { _ = try await fixture.invite([]) } != nil)
        let many = (0...Invitations.maxPerImport).map { ("p\($0)@example.org", String?.none) }
        guard case .refused(let problems) = await fixture.failure({ _ = try await fixture.invite(many) }) else {
            Issue.record("more than the most one CSV may hold was not refused")
            return
        }
        #expect(problems.first?.message == "at most \(Invitations.maxPerImport) invitations at once")
        #expect(fixture.store.state.invitations.isEmpty)
    }

    @Test func anUnknownStudyOrAnUnreachableResponseServiceKeepsNothing() async throws {
        let fixture = Fixture()
        let unknown = await fixture.failure {
            _ = try await fixture.invitations.invite(
                [.init(line: 2, email: "ana@example.org", site: nil, properties: [:])], studyId: "NOSUCH", actor: "ana@example.org")
        }
        #expect(unknown == .unknownStudy)
        fixture.tokens.stopAnswering()
        #expect(await fixture.failure { _ = try await fixture.invite([("ana@example.org", nil)]) } == .unavailable)
        #expect(fixture.store.state.invitations.isEmpty && fixture.store.state.mail.isEmpty && fixture.store.state.events.isEmpty)
    }

    /// An address invited by someone else between the check and the write: the unit of work
    /// keeps nothing, and the tokens the response service made for it are revoked.
    @Test func anInvitationThatCannotBeKeptHasItsTokensRevoked() async throws {
        let fixture = Fixture()
        try await fixture.invite([("ana@example.org", nil)])
        let invitations = Invitations(
            transactions: fixture.store, store: EmptyRecords(), sites: Sites(), tokens: fixture.tokens,
            studies: Standings(standings: ["SLEEP": StudyStanding(studyId: "SLEEP", appId: "APP", status: .active)]), apps: Apps(),
            defaultFrom: "x@example.org", validFor: .seconds(86_400), logger: Logger(label: "test"))
        await #expect(throws: (any Error).self) {
            _ = try await invitations.invite(
                [.init(line: 2, email: "ben@example.org", site: nil, properties: [:]),
                 .init(line: 3, email: "ana@example.org", site: nil, properties: [:])],
                studyId: "SLEEP", actor: "ana@example.org")
        }
        #expect(fixture.store.state.invitations.count == 1)
        #expect(fixture.store.state.mail.count == 1)
        #expect(fixture.tokens.revoked.count == 2)
    }

    /// Records that never find an open address: as if another admin's invitation were not yet
    /// visible when the CSV was checked.
    struct EmptyRecords: InvitationRecords {
        func openAddresses(studyId: String, emailKeys: [String]) async throws -> Set<String> { [] }
        func invitations(_ query: InvitationStore.Query) async throws -> InvitationList {
            InvitationList(invitations: [], next: nil, identities: query.identities)
        }
        func invitation(studyId: String, id: UUID, identities: Bool) async throws -> Invitation? { nil }
    }

    @Test func aResendWaitsItsTimeSendsTheSameTokenAndStopsAtItsLimit() async throws {
        let fixture = Fixture()
        let invited = try await fixture.invite([("ana@example.org", nil)])
        let id = try #require(UUID(uuidString: invited[0].invitationId))
        let resend = { try await fixture.invitations.resend(id, studyId: "SLEEP", actor: "ana@example.org", now: fixture.clock.now) }
        guard case .mailLimit = await fixture.failure({ _ = try await resend() }) else {
            Issue.record("a resend within minutes of the first e-mail was not refused")
            return
        }
        #expect(fixture.store.state.mail.count == 1)
        for round in 2...InvitationMailLimits.perInvitation {
            fixture.clock.advance(11 * 60)
            let again = try await resend()
            #expect(again.sentCount == round)
        }
        #expect(fixture.store.state.mail.count == InvitationMailLimits.perInvitation)
        let token = try #require(fixture.store.state.invitations[id]?.token)
        #expect(fixture.store.state.mail.allSatisfy { $0.message.text.contains(token) })
        fixture.clock.advance(11 * 60)
        guard case .mailLimit = await fixture.failure({ _ = try await resend() }) else {
            Issue.record("a sixth e-mail was not refused")
            return
        }
        #expect(fixture.store.state.mail.count == InvitationMailLimits.perInvitation)
    }

    @Test func aRevokedOrSpentInvitationCannotBeResentOrRevoked() async throws {
        let fixture = Fixture()
        let invited = try await fixture.invite([("ana@example.org", nil), ("ben@example.org", nil)])
        let (ana, ben) = (try #require(UUID(uuidString: invited[0].invitationId)), try #require(UUID(uuidString: invited[1].invitationId)))
        let revoked = try await fixture.invitations.revoke(ana, studyId: "SLEEP", actor: "ana@example.org")
        #expect(revoked.state == "revoked")
        #expect(fixture.tokens.revoked == [ana])
        fixture.clock.advance(11 * 60)
        #expect(await fixture.failure {
            _ = try await fixture.invitations.resend(ana, studyId: "SLEEP", actor: "ana@example.org", now: fixture.clock.now)
        } == .notOpen(state: "revoked"))
        // Spent at the response service before its word arrived here: both refuse, nothing changes.
        fixture.tokens.spend(ben)
        #expect(await fixture.failure { _ = try await fixture.invitations.revoke(ben, studyId: "SLEEP", actor: "ana@example.org") }
            == .notOpen(state: "enrolled"))
        #expect(fixture.store.state.invitations[ben]?.revokedAt == nil)
        #expect(await fixture.failure { _ = try await fixture.invitations.revoke(UUID(), studyId: "SLEEP", actor: "ana@example.org") }
            == .notFound)
    }

    @Test func theResponseServicesWordThatATokenWasSpentIsRecordedOnce() async throws {
        let fixture = Fixture()
        let invited = try await fixture.invite([("ana@example.org", nil)])
        let id = try #require(UUID(uuidString: invited[0].invitationId))
        let enrollment = InvitationEnrollment(studyId: "SLEEP", invitationId: id, participantTokenHash: "hash", enrolledAt: fixture.clock.now)
        #expect(try await fixture.invitations.recordEnrollment(enrollment))
        #expect(try await fixture.invitations.recordEnrollment(enrollment), "a repeat is taken")
        #expect(fixture.store.state.events.filter { $0.action == "invitations.enrolled" }.count == 1)
        let elsewhere = InvitationEnrollment(studyId: "OTHER", invitationId: id, participantTokenHash: "hash", enrolledAt: fixture.clock.now)
        #expect(try await fixture.invitations.recordEnrollment(elsewhere) == false)
        #expect(try await fixture.store.openAddresses(studyId: "SLEEP", emailKeys: ["ana@example.org"]).isEmpty)
    }

    @Test func aTestersInvitationSaysSo() async throws {
        let fixture = Fixture(status: .testing)
        try await fixture.invite([("ana@example.org", nil)])
        #expect(fixture.store.state.mail.first?.message.html.contains("You are invited as a tester.") == true)
    }
}
