import Foundation

/// How many invitation e-mails may go out. An invitation e-mail goes to an address an admin typed
/// or imported, so without bounds an admin, or anyone holding an admin's session, could use the
/// platform to mail any address as often as they liked, and spend the institution's sending
/// reputation doing it (docs/registration-api.md, Invitations).
package enum InvitationMailLimits {
    /// E-mails one invitation is sent in all: the first and four resends.
    package static let perInvitation = 5
    /// The least time between two e-mails of one invitation.
    package static let betweenResends: Duration = .seconds(10 * 60)
    /// E-mails a study's invitations send in any 24 hours: one whole CSV (`Invitations.maxPerImport`).
    package static let perStudyPerDay = 10_000
    /// E-mails one admin's invitations send in any 24 hours, across every study.
    package static let perAdminPerDay = 20_000

    /// Why `count` more e-mails may not go now, or nil when they may: `sentByStudy` and
    /// `sentByAdmin` are what went out in the last 24 hours.
    package static func refusal(count: Int, sentByStudy: Int, sentByAdmin: Int) -> String? {
        if sentByStudy + count > perStudyPerDay {
            return "this study's invitations may send \(perStudyPerDay) e-mails a day; \(max(0, perStudyPerDay - sentByStudy)) more may go before "
                + "the oldest of today's is a day old"
        }
        if sentByAdmin + count > perAdminPerDay {
            return "your invitations may send \(perAdminPerDay) e-mails a day across all studies; \(max(0, perAdminPerDay - sentByAdmin)) more "
                + "may go before the oldest of today's is a day old"
        }
        return nil
    }

    /// Why one invitation may not be sent again now (`sent` e-mails so far, the last at `lastSentAt`).
    package static func resendRefusal(sent: Int, lastSentAt: Date, now: Date) -> String? {
        if sent >= perInvitation {
            return "this invitation has been sent \(sent) times, the most one may be; revoke it and invite the address again if it must"
        }
        let wait = betweenResends.inSeconds - now.timeIntervalSince(lastSentAt)
        if wait > 0 {
            return "this invitation was sent less than \(Int(betweenResends.inSeconds / 60)) minutes ago; resend it in \(Int(wait.rounded(.up))) s"
        }
        return nil
    }
}
