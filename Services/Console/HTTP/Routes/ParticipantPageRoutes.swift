import AdminContracts
import ConsoleCore
import Foundation
import Hummingbird
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's participants (`/studies/{studyId}/participants`), over registration's admin API: a
/// searchable, paged table (status, site, enrolled, consent, last activity; addresses for a study
/// admin), the adherence per activity, and one participant's page with their consent history,
/// their signed PDFs (study admin) and their activity states.
package struct ParticipantPageRoutes: Sendable {
    let pages: ConsolePages
    /// One participant's page, gathered from the three services (`ParticipantRecord`, the console's core).
    let records: ParticipantRecord

    static let pageSize = 50

    package init(pages: ConsolePages, records: ParticipantRecord) {
        self.pages = pages
        self.records = records
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/participants", use: list)
        router.post("/studies/:studyId/participants/consent-reminders", use: remindConsent)
        router.get("/studies/:studyId/participants/consent-history", use: consentHistory)
        router.get("/studies/:studyId/participants/number/:number", use: byNumber)
        router.get("/studies/:studyId/participants/:participantId", use: show)
        router.get("/studies/:studyId/participants/:participantId/consents/:consentId/pdf", use: consentPDF)
        router.get("/studies/:studyId/sage-archives/:archiveId", use: sageArchive)
        router.get("/studies/:studyId/sage-archives/:archiveId/file", use: sageArchive)
        router.get("/studies/:studyId/sage-certificate", use: sageCertificate)
    }

    @Sendable func list(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let reminded = request.uri.queryParameters["reminded"].flatMap { Int(String($0)) }
            return try await listPage(
                studyId, request.uri.queryParameters, session: session, context: context,
                notice: reminded.map { .init(done: ConsentSection.reminded($0)) })
        }
    }

    /// What the consent section says after a reminder was asked for, or why it was refused.
    struct Notice {
        var done: String?
        var problem: String?
        var status: HTTPResponse.Status = .ok
    }

    /// Reminds everyone who owes a signature, with the quiet hours and message the form gives.
    @Sendable func remindConsent(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let message = form["message"].flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
            let reminder = ConsentReminderRequest(quietFrom: form["quietFrom"], quietUntil: form["quietUntil"], message: message)
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.remindConsent(reminder, of: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let summary):
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/participants?reminded=\(summary.requested ?? 0)#consent")
            case .failure(let error) where [400, 403, 404].contains(error.status):
                return try await listPage(
                    studyId, request.uri.queryParameters, session: session, context: context,
                    notice: .init(problem: ConsentSection.refusal(error.message), status: HTTPResponse.Status(code: error.status ?? 400)))
            case .failure(let error):
                throw error
            }
        }
    }

    /// The consent history as registration writes it (CSV), passed on.
    @Sendable func consentHistory(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pages.api.download(AdminCalls.consentHistory, ["studyId": studyId], token: session.token, logger: context.logger)
                .response
        }
    }

    func listPage(
        _ studyId: String, _ parameters: Parameters, session: ConsoleSession, context: ServiceRequestContext, notice: Notice?
    ) async throws -> Response {
        let status = parameters["status"].map(String.init).flatMap { ParticipantList.statuses.contains($0) ? $0 : nil } ?? ""
        let site = parameters["site"].map(String.init).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() } ?? ""
        let search = String((parameters["q"].map(String.init) ?? "").prefix(100)).trimmingCharacters(in: .whitespaces)
        let after = parameters["after"].map(String.init).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() } ?? ""
        let sort = parameters["sort"].map(String.init).flatMap(ParticipantList.Sort.init(rawValue:)) ?? .participantId
        let descending = parameters["order"] == "desc"
        let owing = parameters["consent"] == "owed"
        do {
            let order = [("sort", sort == .participantId ? "" : sort.rawValue), ("order", descending ? "desc" : "")]
            // A number searched for is a participant number: the person it links to, or no one.
            // When the response service cannot say, it is searched for as text, and the page says so.
            var searchBy = [("q", search)]
            var numberSearchFailed = false
            if let number = Int64(search), number > 0 {
                let link = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                    try await pages.api.participantLink(number, of: studyId, token: session.token, logger: context.logger)
                }
                switch link {
                case .success(let hash): searchBy = [("appTokenSHA256", hash ?? String(repeating: "0", count: 64))]
                case .failure: numberSearchFailed = true
                }
            }
            // The list, the consent reminders, the sites (the filter's choices, not counted) and the
            // adherence, in one call to registration.
            async let read = pages.api.participantsPage(
                of: studyId,
                query: [("status", status), ("site", site), ("consent", owing ? "owed" : ""), ("after", after), ("limit", String(Self.pageSize))]
                    + searchBy + order,
                token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let registration = try await read
            let list = registration.participants
            // One identity for a person on every page: the participant number of the study's data
            // and exports, found at the response service by the hash registration holds. The
            // list stands without it (a note says the numbers could not be read).
            let numbers = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.participantNumbers(
                    of: studyId, hashes: list.participants.compactMap(\.appTokenSHA256), token: session.token, logger: context.logger)
            }
            let numberOf = try? numbers.get()
            let rows = list.participants.map { participant in
                let number = participant.appTokenSHA256.flatMap { numberOf?[$0] }
                return ParticipantsView.Row(
                    participantId: participant.participantId,
                    label: numberOf == nil ? ParticipantAddress.unknownNumber : ParticipantAddress.label(number),
                    href: ParticipantAddress.path(studyId: studyId, number: number, participantId: participant.participantId),
                    email: participant.email ?? "", status: StatusNames.participant(participant.status), site: participant.siteName ?? "",
                    enrolledAt: participant.enrolledAt.map(StudyPageModels.timestamp) ?? "", consent: participant.consentVersions.last ?? "",
                    owesConsent: participant.owesConsent,
                    lastActivityAt: participant.lastActivityAt.map(StudyPageModels.timestamp) ?? "", completion: participant.completion,
                    adherence: participant.adherence)
            }
            let listPath = "/studies/\(AdminAPIClient.segment(studyId))/participants"
            // Each sortable column's heading links to that order (the other direction when it is
            // the current one), keeping the filters.
            func heading(_ column: ParticipantList.Sort) -> ParticipantsView.SortHeading {
                let current = column == sort
                let flip = current && !descending
                return .init(
                    href: listPath
                        + AdminAPIClient.queryString([
                            ("status", status), ("site", site), ("consent", owing ? "owed" : ""), ("q", search), ("sort", column.rawValue),
                            ("order", flip ? "desc" : "asc"),
                        ]),
                    ariaSort: current ? (descending ? "descending" : "ascending") : "none")
            }
            let adherenceCounts = registration.adherence
            let view = ParticipantsView(
                numbersUnavailable: numberOf == nil, numberSearchFailed: numberSearchFailed, participants: rows, hasParticipants: !rows.isEmpty, identities: list.identities,
                nextHref: list.next.map {
                    listPath
                        + AdminAPIClient.queryString(
                            [("status", status), ("site", site), ("consent", owing ? "owed" : ""), ("q", search), ("after", $0)] + order)
                },
                sort: .init(status: heading(.status), enrolledAt: heading(.enrolledAt), lastActivityAt: heading(.lastActivityAt)),
                statuses: ParticipantList.statuses.map { .init(value: $0, label: StatusNames.participant($0), selected: $0 == status) },
                sites: registration.sites.sites.map { .init(siteId: $0.siteId, name: $0.name, selected: $0.siteId == site) },
                search: search,
                adherence: adherenceCounts.activities.map {
                    .init(activityId: $0.activityId, upToDate: $0.upToDate, behind: $0.behind, notStarted: $0.notStarted)
                },
                hasAdherence: !adherenceCounts.activities.isEmpty, inStudy: adherenceCounts.participants,
                owingFilter: owing,
                consent: ConsentSection(
                    registration.consentReminders, mayRemind: state.role == .studyAdmin, done: notice?.done, problem: notice?.problem,
                    historyHref: listPath + "/consent-history"))
            return pages.render(
                view, title: "Participants · \(state.summary.name)", session: session, state: state, current: "participants",
                status: notice?.status ?? .ok)
        }
    }

    /// The old address of a participant number (from before the number was the page's own):
    /// the page at its address now.
    @Sendable func byNumber(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let text = try context.parameters.decoded("number")
        return try await pages.signedIn(request, context) { _, _ in
            guard let number = ParticipantAddress.number(inAddress: text) else {
                throw APIError.badRequest("a participant number is a positive whole number", field: "number")
            }
            return PageRenderer.redirect(to: ParticipantAddress.path(studyId: studyId, number: number, participantId: ""))
        }
    }

    /// One participant's page, at their number (`/participants/12`). An address by registration's
    /// participant id leads to the number's, once the response service gives one.
    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let segment = try context.parameters.decoded("participantId")
        // The three weeks the timeline shows from, when not the weeks around now.
        let timelineStart = try request.uri.queryParameters["timeline"].map { text in
            guard let start = RunTimeline.Shown.start(String(text), now: Date()) else {
                throw APIError.badRequest("timeline must be a date (yyyy-MM-dd) from 2000 to a year from now", field: "timeline")
            }
            return start
        }
        return try await pages.signedIn(request, context) { session, _ in
            let addressed = ParticipantAddress.number(inAddress: segment)
            let now = Date()
            let shown = RunTimeline.Shown(start: timelineStart, now: now)
            async let gathered = records.record(
                addressed.map { .number($0) } ?? .participantId(segment), of: studyId, shown: shown, now: now, token: session.token,
                logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let record = try await gathered
            // Addressed by registration's id while they have a number: the page is at the number.
            if addressed == nil, case .known(let number?) = record.number {
                let query = request.uri.query.map { "?" + $0 } ?? ""
                return PageRenderer.redirect(to: ParticipantAddress.path(studyId: studyId, number: number, participantId: "") + query)
            }
            let found = record.detail
            let label: String
            switch record.number {
            case .known(let number): label = ParticipantAddress.label(number)
            case .unavailable: label = ParticipantAddress.unknownNumber
            }
            let participant = found.participant
            let participantId = participant.participantId
            var view = ParticipantView(
                participant: .init(
                    label: label, participantId: participant.participantId, email: participant.email ?? "", hasEmail: participant.email != nil,
                    status: StatusNames.participant(participant.status), site: participant.siteName ?? "none",
                    enrolledAt: participant.enrolledAt.map(StudyPageModels.timestamp) ?? "not yet",
                    withdrawnAt: participant.withdrawnAt.map(StudyPageModels.timestamp) ?? "", hasWithdrawn: participant.withdrawnAt != nil,
                    sharing: participant.sharing ?? "not asked", completion: participant.completion, adherence: participant.adherence,
                    verified: found.account.verified ? "yes" : "not yet",
                    locked: found.account.lockedUntil.map { "until \(StudyPageModels.timestamp($0))" } ?? "no",
                    disabled: found.account.disabledAt.map { "since \(StudyPageModels.timestamp($0))" } ?? "no"),
                consents: found.consents.map { consent in
                    .init(
                        consentId: consent.consentId, version: consent.version, status: StatusNames.consent(consent.status), sharing: consent.sharing,
                        recordedAt: StudyPageModels.timestamp(consent.recordedAt), hasPDF: consent.pdfSHA256 != nil,
                        pdfBytes: consent.pdfBytes.map { "\(($0 + 1023) / 1024) KB" } ?? "", sha: String((consent.pdfSHA256 ?? "").prefix(16)),
                        download: found.mayReadConsentPDFs && consent.pdfSHA256 != nil)
                },
                hasConsents: !found.consents.isEmpty,
                activities: found.activities.map { activity in
                    .init(
                        activityId: activity.activityId, version: activity.version, state: StatusNames.activity(activity.state),
                        runId: activity.runId, runs: "\(activity.runsCompleted) of \(activity.runsTotal)", missed: activity.runsMissed,
                        updatedAt: StudyPageModels.timestamp(activity.updatedAt))
                },
                hasActivities: !found.activities.isEmpty,
                // Their responses, found at the response service by the hash of the participant id
                // their app holds (registration knows it once the app reported it).
                responsesLinked: found.appTokenSHA256 != nil)
            // Their weekly report, from the counts registration keeps.
            if let report = record.weeks {
                view.weeks = report.weeks.map { week in
                    ParticipantView.WeekRow(
                        week: week.week,
                        cells: week.activities.map {
                            .init(
                                activityId: $0.activityId,
                                text: "\($0.completed) of \($0.opened) done, \($0.missed) missed"
                                    + ($0.notStored > 0 ? ", \($0.notStored) done with answers not stored" : ""))
                        },
                        adherence: week.adherencePercent.map { "\($0)%" } ?? "–")
                }
                view.hasWeeks = !report.weeks.isEmpty
            }
            // Their runs, computed by registration from the schedule and the data that arrived;
            // the page stands without them, saying why.
            switch record.runs {
            case .notEnrolled: break
            case .shown(let reply):
                view.runs = RunTimeline(
                    reply: reply, app: found.activities, now: now, shown: shown,
                    pageHref: ParticipantAddress.path(studyId: studyId, number: addressed, participantId: participantId))
                view.hasRuns = !reply.runs.isEmpty
            case .unavailable(let message):
                view.runsUnavailable = true
                view.runsMessage = message
            }
            // The rest of the page is registration's: it stands when the response service cannot
            // answer, with a note in place of the responses.
            switch record.responses {
            case .notLinked: break
            case .unavailable: view.responsesUnavailable = true
            case .listed(let responses, let archives):
                view.responses = responses.reversed().map { response in
                    .init(
                        id: String(response.id), activityId: response.activityId, version: response.version, status: StatusNames.response(response.status),
                        error: response.errorMessage ?? "", receivedAt: StudyPageModels.timestamp(response.receivedAt),
                        rowsHref: ResponseDataRoutes.tableHref(studyId, response.activityId)
                            + AdminAPIClient.queryString([("participant", String(response.participantId))]))
                }
                view.hasResponses = !responses.isEmpty
                view.responseParticipant = responses.first.map { String($0.participantId) } ?? ""
                // Each archive a Sage app sent made one of those responses: theirs, with files.
                view.sageArchives = archives.map { ParticipantView.Archive($0, studyId: studyId) }
                view.hasSageArchives = !archives.isEmpty
            }
            return pages.render(view, title: "\(label) · \(state.summary.name)", session: session, state: state, current: "participants")
        }
    }


    /// An archive's ZIP, or one of its files, passed on from the response service (editors; it
    /// audits each download).
    @Sendable func sageArchive(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let archiveId = try context.parameters.decoded("archiveId")
        let file = request.uri.path.hasSuffix("/file") ? String(request.uri.queryParameters["name"] ?? "") : nil
        return try await pages.signedIn(request, context) { session, _ in
            let parameters = ["studyId": studyId, "archiveId": archiveId]
            let download =
                if let file {
                    try await pages.api.download(
                        AdminCalls.sageArchiveFile, parameters, query: [("name", file)], token: session.token, logger: context.logger)
                } else {
                    try await pages.api.download(AdminCalls.sageArchive, parameters, token: session.token, logger: context.logger)
                }
            return download.response
        }
    }

    /// The study's certificate for the app build (made on first use by the response service).
    @Sendable func sageCertificate(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let download = try await pages.api.download(
                AdminCalls.sageCertificate, ["studyId": studyId], token: session.token, logger: context.logger)
            return download.response
        }
    }

    /// The signed PDF, passed on from registration (which checks its hash and audits the reading).
    @Sendable func consentPDF(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let participantId = try context.parameters.decoded("participantId")
        let consentId = try context.parameters.decoded("consentId")
        return try await pages.signedIn(request, context) { session, _ in
            let download = try await pages.api.download(
                AdminCalls.consentPDF, ["studyId": studyId, "participantId": participantId, "consentId": consentId],
                token: session.token, logger: context.logger)
            return download.response
        }
    }
}
