import Foundation
import JSONText

extension MyStudiesParticipantPlan {
    /// The sites of the studies here, each named uniquely in its study.
    static func readSites(
        _ export: MyStudiesParticipantExport, studiesHere: Set<ScalarKey>, times: DatabaseTimes, findings: inout [MoveInFinding]
    ) -> [Site] {
        var names: Set<ScalarKey> = []
        var seen: Set<ScalarKey> = []
        var sites: [Site] = []
        for source in export.sites {
            guard studiesHere.contains(ScalarKey(source.studyId)) else {
                findings.append(MoveInFinding(studyId: source.studyId, at: "sites#\(source.siteId)", effect: .notImported, message: "the study is not here: move the studies in first"))
                continue
            }
            guard fits(source.siteId), seen.insert(ScalarKey("\(source.studyId)\u{0}\(source.siteId)")).inserted else {
                findings.append(MoveInFinding(studyId: source.studyId, at: "sites#\(source.siteId)", effect: .notImported, message: "the site's id is empty, too long or repeated"))
                continue
            }
            let base = TextRules.singleLineField(String((source.name ?? source.location ?? "").prefix(90)), maximum: 90) ?? ""
            var name = base.isEmpty ? "Site \(sites.count + 1)" : base
            var suffix = 2
            while !names.insert(ScalarKey("\(source.studyId)\u{0}\(name.lowercased())")).inserted {
                name = "\(base.isEmpty ? "Site" : base) (\(suffix))"
                suffix += 1
            }
            if name != base, !base.isEmpty {
                findings.append(MoveInFinding(studyId: source.studyId, at: "sites#\(source.siteId)", effect: .changed, message: "another site of the study has the name \(base): this one is \(name)"))
            }
            sites.append(
                Site(
                    sourceId: source.siteId, studyId: source.studyId, name: name,
                    location: String((source.location ?? "").prefix(maxFieldLength)),
                    targetEnrollment: source.targetEnrollment.flatMap { $0 > 0 ? min($0, 10_000_000) : nil },
                    decommissioned: source.status == 0, createdAt: source.createdAt.flatMap(times.instant)))
        }
        return sites
    }

    /// The invitations of the studies here that were sent: open ones keep their tokens working.
    static func readInvitations(
        _ export: MyStudiesParticipantExport, studiesHere: Set<ScalarKey>, times: DatabaseTimes, findings: inout [MoveInFinding]
    ) -> [Invitation] {
        var enrolments: [ScalarKey: MyStudiesParticipantExport.Enrolment] = [:]
        for enrolment in export.enrolments {
            if let invitation = enrolment.invitationId { enrolments[ScalarKey(invitation)] = enrolment }
        }
        var tokens: Set<ScalarKey> = []
        var open: Set<ScalarKey> = []
        var invitations: [Invitation] = []
        for source in export.invitations {
            let at = "participant_registry_site#\(source.invitationId)"
            guard studiesHere.contains(ScalarKey(source.studyId)) else {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the study is not here: move the studies in first"))
                continue
            }
            guard fits(source.invitationId) else {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the invitation's id is empty or too long"))
                continue
            }
            guard let email = source.email?.trimmingCharacters(in: .whitespacesAndNewlines), EmailAddress.isPlausible(email), fits(email) else {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the invitation has no e-mail address"))
                continue
            }
            if source.onboardingStatus == "N" {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "\(email) was added to a site but never invited: invite them here"))
                continue
            }
            let token = (source.enrollmentToken ?? "").trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
            guard (4...32).contains(token.unicodeScalars.count), token.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) }),
                tokens.insert(ScalarKey(token)).inserted
            else {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the invitation's token is missing, not letters and digits, or another invitation's"))
                continue
            }
            let state: Invitation.State
            if let enrolment = enrolments[ScalarKey(source.invitationId)], let participantId = enrolment.participantId, !participantId.isEmpty {
                state = .enrolled(participantId: participantId, at: enrolment.enrolledAt.flatMap(times.instant))
            } else if source.onboardingStatus == "D" || source.disabledAt != nil {
                state = .revoked(at: source.disabledAt.flatMap(times.instant))
            } else if source.tokenUsed == true || source.onboardingStatus == "E" {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the invitation was used by an enrolment that is not in the export"))
                continue
            } else {
                // One open invitation per address and study, as here.
                guard open.insert(ScalarKey("\(source.studyId)\u{0}\(email.lowercased())")).inserted else {
                    findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "\(email) has another open invitation to the study"))
                    continue
                }
                state = .open
            }
            guard let expiresAt = source.tokenExpiresAt.flatMap(times.instant) ?? source.invitedAt.flatMap(times.instant) else {
                findings.append(MoveInFinding(studyId: source.studyId, at: at, effect: .notImported, message: "the invitation has neither an expiry nor a time it was sent"))
                continue
            }
            invitations.append(
                Invitation(
                    sourceId: source.invitationId, studyId: source.studyId, sourceSiteId: source.siteId, email: email, token: token,
                    expiresAt: expiresAt, sentCount: min(max(source.invitationCount ?? 1, 1), 1000),
                    lastSentAt: source.invitedAt.flatMap(times.instant), createdAt: source.createdAt.flatMap(times.instant), state: state))
        }
        return invitations
    }
}
