import Foundation
import Logging
import QRCode
import ServiceKit
import StudyModels

/// Inviting participants to a study: one by one or a whole CSV at once (all or nothing), each
/// with its own single-use enrollment token (made by the response service, which checks every
/// enrollment) and an e-mail carrying the token and its QR code; then resending and revoking.
/// Every change commits with its audit event and its e-mails.
package struct Invitations: Sendable {
    /// One invitation asked for: an address, an optional site (its id or name) and participant
    /// properties; `line` locates it in a CSV (1 for a single invitation).
    package struct Wanted: Sendable {
        package var line: Int
        package var email: String
        package var site: String?
        package var properties: [String: String]

        package init(line: Int, email: String, site: String?, properties: [String: String]) {
            self.line = line
            self.email = email
            self.site = site
            self.properties = properties
        }
    }

    package enum Failure: Error, Sendable, Equatable {
        /// What is wrong, line by line; nothing was kept.
        case refused([InvitationImport.Problem])
        /// study-metadata has no published study by that id.
        case unknownStudy
        /// study-metadata or the response service cannot be reached; nothing was kept.
        case unavailable
        case notFound
        /// The invitation is no longer `invited` or `expired`.
        case notOpen(state: String)
        /// An e-mail limit (`InvitationMailLimits`) would be passed; nothing was sent or kept.
        case mailLimit(String)
    }

    /// Every change, in one transaction each.
    package let transactions: any Transactions<any InvitationWork>
    package let store: any InvitationRecords
    package let sites: any SiteReferences
    package let tokens: any InvitationTokenIssuing
    package let studies: any StudySchedules
    package let apps: any AppDirectory
    /// The sender of e-mails for an app that names none.
    package let defaultFrom: String
    /// How long an invitation's token may be used.
    package let validFor: Duration
    package let logger: Logger

    /// The most invitations one CSV may hold.
    package static let maxPerImport = 10_000

    package init(
        transactions: any Transactions<any InvitationWork>, store: any InvitationRecords, sites: any SiteReferences,
        tokens: any InvitationTokenIssuing, studies: any StudySchedules, apps: any AppDirectory, defaultFrom: String,
        validFor: Duration, logger: Logger
    ) {
        self.transactions = transactions
        self.store = store
        self.sites = sites
        self.tokens = tokens
        self.studies = studies
        self.apps = apps
        self.defaultFrom = defaultFrom
        self.validFor = validFor
        self.logger = logger
    }

    /// Invites every one of `wanted`, or none: each line is checked (a plausible address, once in
    /// the list, not already invited, a site of the study that is in use, properties the study
    /// declares with values of their type) before anything is kept.
    package func invite(_ wanted: [Wanted], studyId: String, actor: String, now: Date = Date()) async throws -> [Invitation] {
        guard wanted.count <= Self.maxPerImport else {
            throw Failure.refused([.init(line: 0, field: "", message: "at most \(Self.maxPerImport) invitations at once")])
        }
        guard !wanted.isEmpty else { throw Failure.refused([.init(line: 0, field: "email", message: "nobody to invite")]) }
        let context = try await mailContext(studyId: studyId)
        let siteReferences = try await sites.references(studyId: studyId)
        let open = try await store.openAddresses(studyId: studyId, emailKeys: wanted.map { EmailKey.of($0.email) })
        var problems: [InvitationImport.Problem] = []
        var seen: [String: Int] = [:]
        var chosen: [(wanted: Wanted, site: UUID?)] = []
        for item in wanted {
            let email = item.email.trimmingCharacters(in: .whitespaces)
            let key = EmailKey.of(email)
            if email.isEmpty || !EmailAddress.isPlausible(email) || !MailMessage.isSingleLine(email) {
                problems.append(.init(line: item.line, field: "email", message: "'\(email)' is not an e-mail address"))
                continue
            }
            if let first = seen[key] {
                problems.append(.init(line: item.line, field: "email", message: "\(email) is already on line \(first)"))
                continue
            }
            seen[key] = item.line
            if open.contains(key) {
                problems.append(.init(
                    line: item.line, field: "email", message: "\(email) already has an invitation to this study: resend it instead"))
                continue
            }
            var site: UUID?
            if let name = item.site?.trimmingCharacters(in: .whitespaces), !name.isEmpty {
                guard let reference = siteReferences[name.lowercased()] else {
                    problems.append(.init(line: item.line, field: "site", message: "the study has no site '\(name)'"))
                    continue
                }
                guard !reference.decommissioned else {
                    problems.append(.init(line: item.line, field: "site", message: "site '\(reference.name)' is decommissioned"))
                    continue
                }
                site = reference.id
            }
            chosen.append((Wanted(line: item.line, email: email, site: item.site, properties: item.properties), site))
        }
        guard problems.isEmpty else { throw Failure.refused(problems) }

        let expiresAt = now + validFor.timeInterval
        let ids = chosen.map { _ in UUID() }
        let request = InvitationTokenRequest(
            invitations: zip(ids, chosen).map { .init(invitationId: $0, expiresAt: expiresAt, properties: $1.wanted.properties) },
            createdBy: actor)
        let reply: InvitationTokenReply
        do {
            reply = try await tokens.issue(request, studyId: studyId, logger: logger)
        } catch is InvitationTokens.Unavailable {
            throw Failure.unavailable
        }
        guard reply.problems.isEmpty else {
            throw Failure.refused(reply.problems.map { problem in
                .init(line: chosen.indices.contains(problem.index) ? chosen[problem.index].wanted.line : 0,
                      field: problem.field, message: problem.message)
            })
        }
        let issued = Dictionary(reply.tokens.map { ($0.invitationId, $0.token) }, uniquingKeysWith: { first, _ in first })
        var new: [InvitationStore.New] = []
        for (id, item) in zip(ids, chosen) {
            guard let token = issued[id] else { throw Failure.unavailable }
            new.append(.init(id: id, email: item.wanted.email, siteId: item.site, token: token, expiresAt: expiresAt))
        }
        do {
            try await transactions.run { work in
                try await recordMail(new.map(\.id), studyId: studyId, actor: actor, in: work)
                try await work.insert(new, studyId: studyId, actor: actor)
                for invitation in new {
                    try await send(invitation.token, to: invitation.email, expiresAt: expiresAt, context: context, in: work)
                }
                try await work.record(
                    actor: actor, action: "invitations.created", studyId: studyId,
                    details: ["count": String(new.count), "sites": Set(new.compactMap { $0.siteId?.uuidString.lowercased() }).sorted()
                        .joined(separator: ",")])
            }
        } catch {
            // The tokens the response service made would otherwise stay usable with no invitation.
            _ = try? await tokens.revoke(ids, studyId: studyId, logger: logger)
            if PostgresErrors.isUniqueViolation(error) {
                throw Failure.refused([.init(line: 0, field: "email", message: "an address was invited by someone else meanwhile; try again")])
            }
            throw error
        }
        // Read back in one query, in the order they were asked for.
        var query = InvitationStore.Query(studyId: studyId, page: ListPage(limit: ids.count), identities: true)
        query.invitationIds = ids
        let stored = try await store.invitations(query)
        let byId = Dictionary(uniqueKeysWithValues: stored.invitations.map { ($0.invitationId, $0) })
        return ids.compactMap { byId[$0.uuidString.lowercased()] }
    }

    /// The same token again, valid for another `validFor`, by e-mail.
    package func resend(_ id: UUID, studyId: String, actor: String, now: Date = Date()) async throws -> Invitation {
        let context = try await mailContext(studyId: studyId)
        let expiresAt = now + validFor.timeInterval
        try await transactions.run { work in
            guard let open = try await work.lock(studyId: studyId, id: id) else { throw Failure.notFound }
            guard ["invited", "expired"].contains(open.state) else { throw Failure.notOpen(state: open.state) }
            if let refusal = InvitationMailLimits.resendRefusal(sent: open.sentCount, lastSentAt: open.lastSentAt, now: now) {
                throw Failure.mailLimit(refusal)
            }
            try await recordMail([id], studyId: studyId, actor: actor, in: work)
            let reply: InvitationTokenReply
            do {
                reply = try await tokens.issue(
                    InvitationTokenRequest(invitations: [.init(invitationId: id, expiresAt: expiresAt)], createdBy: actor),
                    studyId: studyId, logger: logger)
            } catch is InvitationTokens.Unavailable {
                throw Failure.unavailable
            }
            // The response service renews a token only while it is unused and not revoked.
            guard reply.tokens.first?.token == open.token else { throw Failure.notOpen(state: "enrolled") }
            try await work.markResent(id: id, expiresAt: expiresAt)
            try await send(open.token, to: open.email, expiresAt: expiresAt, context: context, in: work)
            try await work.record(
                actor: actor, action: "invitations.resent", studyId: studyId, details: ["invitationId": id.uuidString.lowercased()])
        }
        return try await invitation(id, studyId: studyId)
    }

    /// The token is refused from now on (the response service first, so a refusal there changes
    /// nothing here).
    package func revoke(_ id: UUID, studyId: String, actor: String) async throws -> Invitation {
        try await transactions.run { work in
            guard let open = try await work.lock(studyId: studyId, id: id) else { throw Failure.notFound }
            guard ["invited", "expired"].contains(open.state) else { throw Failure.notOpen(state: open.state) }
            let reply: InvitationRevocationReply
            do {
                reply = try await tokens.revoke([id], studyId: studyId, logger: logger)
            } catch is InvitationTokens.Unavailable {
                throw Failure.unavailable
            }
            guard reply.revoked.contains(id) else { throw Failure.notOpen(state: "enrolled") }
            try await work.markRevoked(id: id)
            try await work.record(
                actor: actor, action: "invitations.revoked", studyId: studyId, details: ["invitationId": id.uuidString.lowercased()])
        }
        return try await invitation(id, studyId: studyId)
    }

    /// The response service's word that an invitation's token was spent; false for an invitation
    /// the study does not have. The first delivery is audited; repeats change nothing more.
    package func recordEnrollment(_ enrollment: InvitationEnrollment) async throws -> Bool {
        try await transactions.run { work -> Bool in
            switch try await work.recordEnrollment(enrollment) {
            case .unknown: return false
            case .repeated: return true
            case .recorded:
                try await work.record(
                    actor: "response-service", action: "invitations.enrolled", studyId: enrollment.studyId,
                    details: ["invitationId": enrollment.invitationId.uuidString.lowercased()])
                return true
            }
        }
    }

    /// Counts the e-mails of `invitationIds` as sent for the study and by `actor`, unless that
    /// would pass a daily limit of `InvitationMailLimits`: then `Failure.mailLimit`, and the unit
    /// of work keeps nothing.
    private func recordMail(_ invitationIds: [UUID], studyId: String, actor: String, in work: any InvitationWork) async throws {
        let sent = try await work.mailSentToday(studyId: studyId, actor: actor)
        if let refusal = InvitationMailLimits.refusal(count: invitationIds.count, sentByStudy: sent.study, sentByAdmin: sent.actor) {
            throw Failure.mailLimit(refusal)
        }
        try await work.recordSends(invitationIds, studyId: studyId, actor: actor)
    }

    private func invitation(_ id: UUID, studyId: String) async throws -> Invitation {
        guard let invitation = try await store.invitation(studyId: studyId, id: id, identities: true) else { throw Failure.notFound }
        return invitation
    }

    // MARK: - The e-mail

    /// What every invitation of a study says: its name, its app's name, and who it comes from.
    struct MailContext: Sendable {
        var studyName: String
        var appName: String
        var appId: String
        var from: String
        /// The study is in testing: the invitation is a tester's, for the app's test build.
        var testing = false
    }

    private func mailContext(studyId: String) async throws -> MailContext {
        let standing: StudyStanding?
        do {
            standing = try await studies.standing(of: studyId, logger: logger)
        } catch is StudyDirectory.Unavailable {
            throw Failure.unavailable
        }
        guard let standing else { throw Failure.unknownStudy }
        let app = try await apps.app(appId: standing.appId)
        let from = app.flatMap { $0.mail.flatMap(MailTemplates.mailbox) } ?? defaultFrom
        return MailContext(
            studyName: standing.name ?? studyId, appName: app?.name.text(for: nil) ?? standing.appId, appId: standing.appId,
            from: from, testing: standing.status == .testing)
    }

    private func send(
        _ token: String, to recipient: String, expiresAt: Date, context: MailContext, in work: any InvitationWork
    ) async throws {
        let message = try Self.message(token: token, to: recipient, expiresAt: expiresAt, context: context)
        try await work.enqueue(message, kind: .invitation, appId: context.appId)
    }

    /// What a tester's invitation adds: which build to use, and that what they do is not kept.
    static func testerNote(_ app: String) -> String {
        """

        <p><strong>You are invited as a tester.</strong> The study is being tested before it opens: use the test build \
        of the \(app) app the study team gave you. What you record is removed when the study opens.</p>
        """
    }

    /// The invitation e-mail: the token in the text, and as a QR code shown in the HTML part (an
    /// inline PNG) for a phone to scan.
    static func message(token: String, to recipient: String, expiresAt: Date, context: MailContext) throws -> MailMessage {
        let until = expiresAt.formatted(.iso8601.year().month().day())
        let study = HTML.escape(context.studyName)
        let app = HTML.escape(context.appName)
        let html = """
            <p>You are invited to take part in the study <strong>\(study)</strong>.</p>\(context.testing ? Self.testerNote(app) : "")
            <p>Install the \(app) app and create your account with this e-mail address. When the app asks for
            an enrollment token, enter <strong>\(HTML.escape(token))</strong> or scan the QR code below.</p>
            <p><img src="cid:\(MailMessage.Attachment.qrCodeId)" alt="QR code of the enrollment token \(HTML.escape(token))" \
            width="264" height="264"></p>
            <p>The token is yours alone, can be used once, and is valid until \(until).</p>
            <p>If you did not expect this invitation, ignore this message.</p>
            """
        let png = try QRCode(encoding: token).png(scale: 8)
        return MailMessage(
            from: context.from, to: recipient,
            subject: MailTemplate.builtIn(.invitation).subject.replacingOccurrences(of: MailTemplate.tokenMarker, with: context.studyName),
            text: HTML.text(of: html),
            html: html, replyTo: nil,
            attachments: [.init(filename: "enrollment-token.png", contentType: "image/png", contentId: MailMessage.Attachment.qrCodeId,
                                data: Data(png))])
    }
}
