import Foundation
import Logging
import RegistrationCore
import ServiceKit
import StudyModels
import Synchronization

/// Invitations, their e-mails and the sends counted against the daily limits, in memory, for
/// `Invitations`: states worked out as `InvitationStore.stateSQL` works them out (revoked,
/// enrolled, expired, invited), one open invitation per address and study (the unique index),
/// changed in units of work (`InvitationMailLimits` sees the sends the unit has counted).
package final class InMemoryInvitations: Transactions, InvitationRecords {
    package struct Row: Sendable {
        package var studyId: String
        package var email: String
        package var siteId: UUID?
        package var token: String
        package var createdAt: Date
        package var expiresAt: Date
        package var lastSentAt: Date
        package var sentCount = 1
        package var revokedAt: Date?
        package var enrolledAt: Date?
    }

    package struct Mail: Sendable {
        package var message: MailMessage
        package var appId: String
    }

    package struct State: Sendable {
        package var invitations: [UUID: Row] = [:]
        package var sends: [(studyId: String, actor: String, at: Date)] = []
        package var mail: [Mail] = []
        package var events: [InMemoryAudit.Event] = []
    }

    /// A second open invitation for one address and study, as the unique index refuses it.
    package struct UniqueViolation: Error {}

    private let store = InMemoryTransactions(State())
    private let clock: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date = Date.init) {
        clock = now
    }

    package var state: State { store.committed }

    static func state(of row: Row, now: Date) -> String {
        if row.revokedAt != nil { return "revoked" }
        if row.enrolledAt != nil { return "enrolled" }
        return row.expiresAt <= now ? "expired" : "invited"
    }

    package func openAddresses(studyId: String, emailKeys: [String]) async throws -> Set<String> {
        let keys = Set(emailKeys)
        return Set(state.invitations.values.filter {
            $0.studyId == studyId && $0.revokedAt == nil && $0.enrolledAt == nil && keys.contains(EmailKey.of($0.email))
        }.map { EmailKey.of($0.email) })
    }

    package func invitations(_ query: InvitationStore.Query) async throws -> InvitationList {
        let now = clock()
        let wanted = query.invitationIds.map(Set.init)
        let rows = state.invitations
            .filter { id, row in
                row.studyId == query.studyId && (wanted?.contains(id) ?? true)
                    && (query.state == nil || Self.state(of: row, now: now) == query.state)
                    && (query.siteId == nil || row.siteId == query.siteId)
                    && (query.page.after.map { id.uuidString.lowercased() > $0.uuidString.lowercased() } ?? true)
            }
            .sorted { $0.key.uuidString.lowercased() < $1.key.uuidString.lowercased() }
        let page = rows.prefix(query.page.limit).map { id, row in
            Invitation(
                invitationId: id.uuidString.lowercased(), email: query.identities ? row.email : nil,
                siteId: row.siteId?.uuidString.lowercased(), siteName: nil, state: Self.state(of: row, now: now),
                createdAt: row.createdAt, expiresAt: row.expiresAt, lastSentAt: row.lastSentAt, sentCount: row.sentCount,
                enrolledAt: row.enrolledAt, participantId: nil, sameEmail: nil)
        }
        return InvitationList(
            invitations: Array(page), next: rows.count > query.page.limit ? page.last?.invitationId : nil, identities: query.identities)
    }

    package func invitation(studyId: String, id: UUID, identities: Bool) async throws -> Invitation? {
        var one = InvitationStore.Query(studyId: studyId, page: .one, identities: identities)
        one.invitationIds = [id]
        return try await invitations(one).invitations.first
    }

    package func run<Result: Sendable>(_ work: (any InvitationWork) async throws -> Result) async throws -> Result {
        try await store.run { copy in try await work(Unit(copy: copy, now: clock())) }
    }

    private struct Unit: InvitationWork {
        let copy: WorkingCopy<State>
        let now: Date

        func mailSentToday(studyId: String, actor: String) async throws -> (study: Int, actor: Int) {
            let today = copy.value.sends.filter { $0.at > now - 86_400 }
            return (today.filter { $0.studyId == studyId }.count, today.filter { $0.actor == actor }.count)
        }

        func recordSends(_ invitationIds: [UUID], studyId: String, actor: String) async throws {
            copy.value.sends += invitationIds.map { _ in (studyId, actor, now) }
        }

        func insert(_ invitations: [InvitationStore.New], studyId: String, actor: String) async throws {
            for invitation in invitations {
                let key = EmailKey.of(invitation.email)
                if copy.value.invitations.values.contains(where: {
                    $0.studyId == studyId && EmailKey.of($0.email) == key && $0.revokedAt == nil && $0.enrolledAt == nil
                }) { throw UniqueViolation() }
                copy.value.invitations[invitation.id] = Row(
                    studyId: studyId, email: invitation.email, siteId: invitation.siteId, token: invitation.token, createdAt: now,
                    expiresAt: invitation.expiresAt, lastSentAt: now)
            }
        }

        func lock(studyId: String, id: UUID) async throws -> InvitationStore.Open? {
            guard let row = copy.value.invitations[id], row.studyId == studyId else { return nil }
            return InvitationStore.Open(
                id: id, email: row.email, token: row.token, state: InMemoryInvitations.state(of: row, now: now),
                sentCount: row.sentCount, lastSentAt: row.lastSentAt)
        }

        func markResent(id: UUID, expiresAt: Date) async throws {
            copy.value.invitations[id]?.expiresAt = expiresAt
            copy.value.invitations[id]?.sentCount += 1
            copy.value.invitations[id]?.lastSentAt = now
        }

        func markRevoked(id: UUID) async throws { copy.value.invitations[id]?.revokedAt = now }

        func recordEnrollment(_ enrollment: InvitationEnrollment) async throws -> InvitationStore.EnrollmentRecord {
            guard let row = copy.value.invitations[enrollment.invitationId], row.studyId == enrollment.studyId else { return .unknown }
            if row.enrolledAt != nil { return .repeated }
            copy.value.invitations[enrollment.invitationId]?.enrolledAt = enrollment.enrolledAt
            return .recorded
        }

        func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws {
            copy.value.mail.append(Mail(message: message, appId: appId))
        }

        func record(actor: String, action: String, studyId: String, details: [String: String]) async throws {
            copy.value.events.append(InMemoryAudit.Event(actor: actor, action: action, studyId: studyId, details: details))
        }
    }
}

/// The response service's invitation tokens in memory: a token per invitation, renewed only
/// while unused and not revoked, as the response service answers; or no answer at all.
package final class InMemoryInvitationTokens: InvitationTokenIssuing, Sendable {
    private struct State {
        var tokens: [UUID: String] = [:]
        var used: Set<UUID> = []
        var revoked: Set<UUID> = []
        var unreachable = false
    }

    private let state = Mutex(State())

    package init() {}

    package func stopAnswering() { state.withLock { $0.unreachable = true } }
    package func spend(_ invitationId: UUID) { _ = state.withLock { $0.used.insert(invitationId) } }
    package var revoked: Set<UUID> { state.withLock { $0.revoked } }
    package var issued: Int { state.withLock { $0.tokens.count } }

    package func issue(_ request: InvitationTokenRequest, studyId: String, logger: Logger) async throws -> InvitationTokenReply {
        try state.withLock { state in
            if state.unreachable { throw InvitationTokens.Unavailable() }
            var issued: [InvitationTokenReply.Issued] = []
            for invitation in request.invitations {
                let id = invitation.invitationId
                if state.used.contains(id) || state.revoked.contains(id) { continue }
                let token = state.tokens[id] ?? String(SecureToken.generate().prefix(8)).uppercased()
                state.tokens[id] = token
                issued.append(.init(invitationId: id, token: token))
            }
            return InvitationTokenReply(tokens: issued, problems: [])
        }
    }

    package func revoke(_ invitationIds: [UUID], studyId: String, logger: Logger) async throws -> InvitationRevocationReply {
        try state.withLock { state in
            if state.unreachable { throw InvitationTokens.Unavailable() }
            let used = invitationIds.filter { state.used.contains($0) }
            let revoked = invitationIds.filter { !state.used.contains($0) && state.tokens[$0] != nil }
            state.revoked.formUnion(revoked)
            return InvitationRevocationReply(revoked: revoked, used: used)
        }
    }
}
