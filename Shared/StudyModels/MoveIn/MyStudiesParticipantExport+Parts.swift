import Foundation
import JSONText
import StudyModels

extension MyStudiesParticipantExport {
    /// The export cut into parts the registration service takes one request at a time, in the
    /// order they must arrive: first the sites with the reader's findings, then the invitations
    /// no enrolment of the export spent, then the accounts, each with its own enrolments,
    /// signatures, activity states and the invitation it enrolled with. A part holds at most
    /// `maxAccounts` accounts (or `maxAccounts` × 10 invitations) and, where one account's records
    /// allow, at most `maxBytes` of JSON; a part holding one account larger than that is still a
    /// part, which the service then refuses as too large, and says so.
    public func parts(maxAccounts: Int, maxBytes: Int) throws -> [MyStudiesParticipantExport] {
        var enrolments: [ScalarKey: [Enrolment]] = [:]
        for enrolment in self.enrolments { enrolments[ScalarKey(enrolment.userId), default: []].append(enrolment) }
        var consents: [ScalarKey: [Consent]] = [:]
        for consent in self.consents { consents[ScalarKey(consent.userId), default: []].append(consent) }
        var states: [ScalarKey: [ActivityState]] = [:]
        for state in activityStates { states[ScalarKey(state.participantId), default: []].append(state) }
        var invitations: [ScalarKey: Invitation] = [:]
        for invitation in self.invitations { invitations[ScalarKey(invitation.invitationId)] = invitation }
        let spent = Set(self.enrolments.compactMap { $0.invitationId.map { ScalarKey($0) } })

        let empty = MyStudiesParticipantExport(source: source, readAt: readAt, appId: appId, databaseTimeZone: databaseTimeZone)
        let encoder = JSONEncoder()
        var parts: [MyStudiesParticipantExport] = []
        var first = empty
        first.sites = sites
        first.findings = findings
        parts.append(first)

        var part = empty
        var bytes = try encoder.encode(part).count
        for invitation in self.invitations where !spent.contains(ScalarKey(invitation.invitationId)) {
            let size = try encoder.encode(invitation).count + 1
            if !part.invitations.isEmpty, part.invitations.count >= maxAccounts * 10 || bytes + size > maxBytes {
                parts.append(part)
                part = empty
                bytes = try encoder.encode(part).count
            }
            part.invitations.append(invitation)
            bytes += size
        }
        if !part.invitations.isEmpty { parts.append(part) }

        part = empty
        bytes = try encoder.encode(part).count
        for account in accounts {
            var single = empty
            single.accounts = [account]
            single.enrolments = enrolments[ScalarKey(account.userId)] ?? []
            single.consents = consents[ScalarKey(account.userId)] ?? []
            single.activityStates = single.enrolments.compactMap(\.participantId).flatMap { states[ScalarKey($0)] ?? [] }
            single.invitations = single.enrolments.compactMap { $0.invitationId.flatMap { invitations[ScalarKey($0)] } }
            let size = try encoder.encode(single).count
            if !part.accounts.isEmpty, part.accounts.count >= maxAccounts || bytes + size > maxBytes {
                parts.append(part)
                part = empty
                bytes = try encoder.encode(part).count
            }
            part.accounts += single.accounts
            part.enrolments += single.enrolments
            part.consents += single.consents
            part.activityStates += single.activityStates
            part.invitations += single.invitations
            bytes += size
        }
        if !part.accounts.isEmpty { parts.append(part) }
        return parts
    }
}
