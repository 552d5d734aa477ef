import Crypto
import Foundation
import JSONText
import Logging
import ServiceKit
import StudyModels

/// Moves one part of a MyStudies 2.x deployment's participants in (docs/moving-in.md): a dry run
/// reports what would come over; the import writes each new account whole, in its own
/// transaction, after telling the response service of the participant ids its apps hold. An
/// account moved in before is skipped, so a repeated run changes nothing and a killed one goes on
/// where it stopped. An account of the same e-mail address already here is left as it is.
package struct ParticipantMoveIns: Sendable {
    /// The most accounts one request moves (`studystack-import` sends an export in parts).
    package static let maxAccounts = 500
    /// Accounts prepared at once (their passwords wrapped in bcrypt, their PDFs stored).
    static let concurrency = 4

    package let store: MovedParticipantStore
    package let registry: any MovedParticipantRegistry
    package let studies: any StudySchedules
    package let apps: AppSettingsStore
    package let storage: any ConsentStorage
    package let hasher: PasswordHasher
    package let passwordExpiry: TimeInterval
    package let logger: Logger

    package init(
        store: MovedParticipantStore, registry: any MovedParticipantRegistry, studies: any StudySchedules, apps: AppSettingsStore,
        storage: any ConsentStorage, hasher: PasswordHasher, passwordExpiry: TimeInterval, logger: Logger
    ) {
        self.store = store
        self.registry = registry
        self.studies = studies
        self.apps = apps
        self.storage = storage
        self.hasher = hasher
        self.passwordExpiry = passwordExpiry
        self.logger = logger
    }

    package func run(
        _ export: MyStudiesParticipantExport, appId: String, dryRun: Bool, actor: String, now: Date = Date()
    ) async throws -> ParticipantMoveInReport {
        guard let app = try await apps.app(appId: appId) else { throw RegistrationAdminError.noApp(appId) }
        guard export.accounts.count <= Self.maxAccounts else { throw RegistrationAdminError.tooManyMovedAccounts(maximum: Self.maxAccounts) }
        let plan = MyStudiesParticipantPlan.read(export, studiesHere: try await studiesHere(of: export, appId: appId))
        var counts = ParticipantMoveInReport.Counts()
        counts.accounts = export.accounts.count
        counts.notImported = export.accounts.count - plan.accounts.count
        var findings = plan.findings
        let moved = try await store.moved(appId: appId, sourceUserIds: plan.accounts.map(\.sourceUserId))
        let waiting = plan.accounts.filter { !moved.contains(ScalarKey($0.sourceUserId)) }
        counts.alreadyImported = plan.accounts.count - waiting.count
        let taken = try await store.takenEmailKeys(appId: appId, orgId: app.orgId, keys: waiting.map { EmailKey.of($0.email) })
        var new: [MyStudiesParticipantPlan.Account] = []
        for account in waiting {
            if taken.contains(EmailKey.of(account.email)) {
                counts.taken += 1
                findings.append(
                    MoveInFinding(
                        studyId: "", at: "user_details#\(account.sourceUserId)", effect: .notImported,
                        message: "an account of \(account.email) is already here and did not come from the source; it is left as it is"))
            } else {
                new.append(account)
            }
        }
        let report = { (counts: ParticipantMoveInReport.Counts) in
            ParticipantMoveInReport(source: export.source, readAt: export.readAt, dryRun: dryRun, counts: counts, findings: findings)
        }
        if dryRun {
            counts.sites = plan.sites.count
            counts.invitations = plan.invitations.count
            counts.openInvitations = plan.invitations.filter { $0.state == .open }.count
            return report(Self.tally(new, into: counts))
        }

        let sites = try await store.insert(sites: plan.sites, appId: appId, actor: actor, now: now)
        counts.sites = sites.created
        for site in sites.refused {
            findings.append(
                MoveInFinding(
                    studyId: site.studyId, at: "sites#\(site.sourceId)", effect: .notImported,
                    message: "another site of the study here is named \(site.name); its participants come over without a site"))
        }
        try await registerParticipantIds(of: new, actor: actor)
        let invitations = try await moveIn(plan.invitations, appId: appId, actor: actor, now: now)
        counts.invitations = invitations.created
        counts.openInvitations = invitations.open
        findings += invitations.findings
        var created: [MyStudiesParticipantPlan.Account] = []
        try await withThrowingTaskGroup(of: (MyStudiesParticipantPlan.Account, MovedParticipantStore.Outcome).self) { group in
            var next = new.makeIterator()
            func start() {
                guard let account = next.next() else { return }
                group.addTask {
                    (account, try await moveIn(account, appId: appId, orgId: app.orgId, source: export.source, actor: actor, now: now))
                }
            }
            for _ in 0..<Self.concurrency { start() }
            while let (account, outcome) = try await group.next() {
                switch outcome {
                case .created: created.append(account)
                case .alreadyImported: counts.alreadyImported += 1
                case .taken: counts.taken += 1
                }
                start()
            }
        }
        return report(Self.tally(created, into: counts))
    }

    /// The studies `export` names (its enrolments', sites' and invitations') that are published
    /// here in the app.
    private func studiesHere(of export: MyStudiesParticipantExport, appId: String) async throws -> Set<ScalarKey> {
        var here: Set<ScalarKey> = []
        var asked: Set<ScalarKey> = []
        let named = export.enrolments.map(\.studyId) + export.sites.map(\.studyId) + export.invitations.map(\.studyId)
        for studyId in named where asked.insert(ScalarKey(studyId)).inserted {
            guard asked.count <= 1000 else { break }
            let standing: StudyStanding?
            do {
                standing = try await studies.standing(of: studyId, logger: logger)
            } catch {
                throw RegistrationAdminError.scheduleUnavailable
            }
            if let standing, ScalarKey(standing.appId) == ScalarKey(appId) { here.insert(ScalarKey(studyId)) }
        }
        return here
    }

    /// Tells the response service of every participant id the new accounts' apps hold, study by
    /// study, before any account is written: an account here always has its ids working there.
    private func registerParticipantIds(of accounts: [MyStudiesParticipantPlan.Account], actor: String) async throws {
        var byStudy: [ScalarKey: [MovedParticipants.Participant]] = [:]
        for account in accounts {
            for study in account.studies {
                guard let participantId = study.participantId, let status = Self.responseStatus(study.status) else { continue }
                byStudy[ScalarKey(study.studyId), default: []].append(
                    MovedParticipants.Participant(
                        tokenHash: SecureToken.hash(participantId), status: status, allowDataSharing: Self.allowDataSharing(study.sharing),
                        enrolledAt: study.enrolledAt ?? study.withdrawnAt ?? Date(timeIntervalSince1970: 0),
                        withdrawnAt: status == "withdrawn" ? (study.withdrawnAt ?? study.enrolledAt ?? Date(timeIntervalSince1970: 0)) : nil))
            }
        }
        try await Self.tell(byStudy, inParts: MovedParticipants.maxParticipants, what: "participants", logger: logger) { part, studyId in
            _ = try await registry.register(MovedParticipants(participants: part, movedBy: actor), studyId: studyId, logger: logger)
        }
    }

    /// Sends each study's items to the response service in parts of at most `size`, study by
    /// study; what it cannot take ends the request (nothing more is written here).
    private static func tell<Item>(
        _ byStudy: [ScalarKey: [Item]], inParts size: Int, what: String, logger: Logger, _ send: ([Item], String) async throws -> Void
    ) async throws {
        for (studyId, items) in byStudy.sorted(by: { $0.key < $1.key }) {
            var start = 0
            while start < items.count {
                let part = Array(items[start..<min(start + size, items.count)])
                do {
                    try await send(part, studyId.text)
                } catch {
                    logger.warning("the response service did not take moved \(what)", metadata: ["error": "\(error)"])
                    throw RegistrationAdminError.responseUnavailable
                }
                start += part.count
            }
        }
    }

    /// The invitations' tokens to the response service, study by study, then the invitations.
    private func moveIn(
        _ invitations: [MyStudiesParticipantPlan.Invitation], appId: String, actor: String, now: Date
    ) async throws -> (created: Int, open: Int, findings: [MoveInFinding]) {
        guard !invitations.isEmpty else { return (0, 0, []) }
        var byStudy: [ScalarKey: [MovedInvitationTokens.Invitation]] = [:]
        for invitation in invitations {
            var moved = MovedInvitationTokens.Invitation(
                invitationId: MovedIds.invitation(appId: appId, studyId: invitation.studyId, sourceId: invitation.sourceId),
                token: invitation.token, expiresAt: invitation.expiresAt)
            switch invitation.state {
            case .open: break
            case .enrolled(let participantId, let at):
                // Refused as well as spent: should its participant not be here, nobody else may use it.
                moved.usedBy = SecureToken.hash(participantId)
                moved.usedAt = at ?? now
                moved.revokedAt = at ?? now
            case .revoked(let at): moved.revokedAt = at ?? now
            }
            byStudy[ScalarKey(invitation.studyId), default: []].append(moved)
        }
        try await Self.tell(byStudy, inParts: MovedInvitationTokens.maxInvitations, what: "invitations", logger: logger) { part, studyId in
            _ = try await registry.register(MovedInvitationTokens(invitations: part, movedBy: actor), studyId: studyId, logger: logger)
        }
        let written = try await store.insert(invitations: invitations, appId: appId, actor: actor, now: now)
        let refused = written.refused.map { invitation in
            MoveInFinding(
                studyId: invitation.studyId, at: "participant_registry_site#\(invitation.sourceId)", effect: .notImported,
                message: "\(invitation.email) has an open invitation to the study here already; theirs from the source was not moved in")
        }
        let refusedIds = Set(written.refused.map { ScalarKey($0.sourceId) })
        let open = invitations.filter { $0.state == .open && !refusedIds.contains(ScalarKey($0.sourceId)) }.count
        return (written.created, written.created == 0 ? 0 : open, refused)
    }

    /// The account's password as it is kept here, its signed PDFs stored; then the account.
    private func moveIn(
        _ account: MyStudiesParticipantPlan.Account, appId: String, orgId: String, source: String, actor: String, now: Date
    ) async throws -> MovedParticipantStore.Outcome {
        var passwordHash = PasswordHasher.resetOnSignIn()
        if case .carried(let digest, let salt) = account.password, let wrapped = try await hasher.wrapMyStudiesHash(digest: digest, salt: salt) {
            passwordHash = wrapped
        }
        // The source's expiry stands: the password counts as changed when that expiry began.
        let changedAt = account.passwordExpiresAt.map { min(now, $0.addingTimeInterval(-passwordExpiry)) } ?? now
        var stored: [ScalarKey: MovedParticipantStore.StoredPDF] = [:]
        for study in account.studies {
            for consent in study.consents {
                guard let pdf = consent.pdf else { continue }
                let key = try await storage.store(pdf, id: MovedIds.consentPDF(appId: appId, studyId: study.studyId, sourceId: consent.sourceId))
                stored[ScalarKey(consent.sourceId)] = .init(key: key, sha256: SHA256.hash(data: pdf).hexString, bytes: pdf.count)
            }
        }
        let outcome = try await store.insert(
            .init(plan: account, passwordHash: passwordHash, passwordChangedAt: changedAt, storedPDFs: stored), appId: appId, orgId: orgId,
            source: source, actor: actor, now: now)
        if case .taken = outcome {
            // Nothing refers to the files stored for an account that was not written (one moved
            // in by another run refers to the same files, which keep the same bytes).
            for file in stored.values { try? await storage.remove(file.key) }
        }
        return outcome
    }

    static func tally(_ accounts: [MyStudiesParticipantPlan.Account], into counts: ParticipantMoveInReport.Counts) -> ParticipantMoveInReport.Counts {
        var counts = counts
        counts.new += accounts.count
        for account in accounts {
            if account.disabled { counts.disabled += 1 } else if case .carried = account.password { counts.passwordsCarried += 1 } else {
                counts.passwordResets += 1
            }
            counts.studyStates += account.studies.count
            for study in account.studies {
                if study.status == "inProgress" || study.status == "completed" { counts.enrolments += 1 }
                if study.status == "Withdrawn" { counts.withdrawals += 1 }
                counts.signatures += study.consents.count
                counts.signedPDFs += study.consents.filter { $0.pdf != nil }.count
                counts.activityStates += study.activities.count
            }
        }
        return counts
    }

    /// How the response service keeps a participant of this standing; nil for one never enrolled.
    static func responseStatus(_ status: String) -> String? {
        switch status {
        case "inProgress", "completed": "enrolled"
        case "Withdrawn": "withdrawn"
        default: nil
        }
    }

    static func allowDataSharing(_ sharing: String) -> String {
        switch sharing {
        case "Provided": "true"
        case "Not Provided": "false"
        default: "NA"
        }
    }
}
