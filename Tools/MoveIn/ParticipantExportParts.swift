import Foundation
import JSONText
import StudyModels

extension MyStudiesParticipantExport {
    /// The export cut into parts the registration service takes one request at a time: each with
    /// at most `maxAccounts` accounts and, where one account's records allow, at most `maxBytes`
    /// of JSON, every account with its own enrolments, signatures and activity states. The
    /// reader's findings go with the first part. A part holding one account larger than
    /// `maxBytes` is still a part: the service then refuses it as too large, and says so.
    public func parts(maxAccounts: Int, maxBytes: Int) throws -> [MyStudiesParticipantExport] {
        var enrolments: [ScalarKey: [Enrolment]] = [:]
        for enrolment in self.enrolments { enrolments[ScalarKey(enrolment.userId), default: []].append(enrolment) }
        var consents: [ScalarKey: [Consent]] = [:]
        for consent in self.consents { consents[ScalarKey(consent.userId), default: []].append(consent) }
        var states: [ScalarKey: [ActivityState]] = [:]
        for state in activityStates { states[ScalarKey(state.participantId), default: []].append(state) }

        let empty = MyStudiesParticipantExport(source: source, readAt: readAt, appId: appId, databaseTimeZone: databaseTimeZone)
        let encoder = JSONEncoder()
        var parts: [MyStudiesParticipantExport] = []
        var part = empty
        part.findings = findings
        var bytes = try encoder.encode(part).count
        for account in accounts {
            var single = empty
            single.accounts = [account]
            single.enrolments = enrolments[ScalarKey(account.userId)] ?? []
            single.consents = consents[ScalarKey(account.userId)] ?? []
            single.activityStates = single.enrolments.compactMap(\.participantId).flatMap { states[ScalarKey($0)] ?? [] }
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
            bytes += size
        }
        if !part.accounts.isEmpty || parts.isEmpty { parts.append(part) }
        return parts
    }
}
