import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `GET|POST /apps/{appId}/move-in`: a super-admin moves studies in from a MyStudies deployment
/// (docs/moving-in.md). The file `studystack-import studies read` wrote is sent with the zone the
/// source's schedules were written in, as a dry run or as the import, through
/// `POST /admin/v1/apps/{appId}/move-in/studies`; the page shows the report.
/// `POST /apps/{appId}/move-in/participants`: the same for the file `studystack-import
/// participants read` wrote, sent in parts of `participantsPerPart` accounts (each part waits for
/// its passwords to be wrapped in bcrypt, within the console's wait for an answer).
package struct MoveInPageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/apps/:appId/move-in", use: form)
        router.post("/apps/:appId/move-in", use: run)
        router.post("/apps/:appId/move-in/participants", use: runParticipants)
    }

    /// Accounts per request: small enough that one part's bcrypt wrapping ends well within the
    /// console's wait for an answer.
    static let participantsPerPart = 25

    @Sendable func runParticipants(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let text = form.text(file: "participantsFile", orPasted: "participants")
            let dryRun = form["action"] != "import"
            let refuse = { (message: String, status: HTTPResponse.Status) in
                page(MoveInView(appId: appId, timeZone: "", report: nil, problems: [], participantProblems: [.init(pointer: "", message: message)]), session: session, status: status)
            }
            guard !text.isEmpty else { return refuse("Choose the file studystack-import participants read wrote.", .unprocessableContent) }
            let export: MyStudiesParticipantExport
            do {
                export = try JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(text.utf8))
            } catch let error as DecodingError {
                return refuse("The file is not a participants export: \(JSONPointer.problem(for: error, document: "export").message)", .unprocessableContent)
            }
            var report: ParticipantMoveInReport?
            for part in try export.parts(maxAccounts: Self.participantsPerPart, maxBytes: 6 * 1024 * 1024) {
                let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                    try await pages.api.moveInParticipants(appId: appId, part: part, dryRun: dryRun, token: session.token, logger: context.logger)
                }
                switch outcome {
                case .success(let partReport):
                    report = report.map { $0.adding(partReport) } ?? partReport
                case .failure(let error) where [400, 403, 404, 413, 422, 503].contains(error.status ?? 0):
                    // What went in before the refusal stays in; the report says how far it got.
                    let done = report.map { " Before it: \($0.counts.sentences(dryRun: dryRun).joined(separator: "; "))." } ?? ""
                    return page(
                        MoveInView(
                            appId: appId, timeZone: "", report: nil, problems: [], participantReport: report,
                            participantProblems: [.init(pointer: "", message: error.message + done)]),
                        session: session, status: HTTPResponse.Status(code: error.status ?? 422))
                case .failure(let error):
                    throw error
                }
            }
            return page(MoveInView(appId: appId, timeZone: "", report: nil, problems: [], participantReport: report), session: session, status: .ok)
        }
    }

    @Sendable func form(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, _ in
            page(MoveInView(appId: appId, timeZone: "", report: nil, problems: []), session: session, status: .ok)
        }
    }

    @Sendable func run(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let export = form.text(file: "exportFile", orPasted: "export")
            let timeZone = FormField.trimmed(form["timeZone"])
            let dryRun = form["action"] != "import"
            var missing: [ValidationProblem] = []
            if export.isEmpty { missing.append(.init(pointer: "", message: "Choose the file studystack-import studies read wrote.")) }
            if timeZone.isEmpty {
                missing.append(.init(pointer: "", message: "Give the time zone the source's schedules were written in (its server's), like America/New_York."))
            }
            guard missing.isEmpty else {
                return page(MoveInView(appId: appId, timeZone: timeZone, report: nil, problems: missing), session: session, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.moveInStudies(
                    appId: appId, export: Array(export.utf8), timeZone: timeZone, dryRun: dryRun, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let report):
                return page(MoveInView(appId: appId, timeZone: timeZone, report: report, problems: []), session: session, status: .ok)
            case .failure(let error) where [400, 403, 404, 413, 422].contains(error.status ?? 0):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return page(
                    MoveInView(appId: appId, timeZone: timeZone, report: nil, problems: problems), session: session,
                    status: HTTPResponse.Status(code: error.status ?? 422))
            case .failure(let error):
                throw error
            }
        }
    }

    private func page(_ view: MoveInView, session: ConsoleSession, status: HTTPResponse.Status) -> Response {
        pages.render(view, title: "Move studies in · \(view.appId)", session: session, status: status)
    }
}

/// `move-in.mustache`: the form, and the report of the last dry run or import.
struct MoveInView: PageView {
    static let template = "move-in"

    struct Study {
        struct Activity {
            var activityId: String
            var versions: String
        }

        struct Group {
            var heading: String
            var findings: [MoveInFinding]
        }

        var studyId: String
        var sourceStatus: String
        var standing: String
        var versions: String
        var versionsHere: Int
        var versionCount: Int
        var activities: [Activity]
        var counts: String
        var groups: [Group]
    }

    var appId: String
    var timeZone: String
    var dryRun: Bool
    var hasReport: Bool
    var source: String
    var readAt: String
    var studies: [Study]
    var problemReport: ProblemReport?
    var participants: Participants?
    var participantProblemReport: ProblemReport?

    /// The participants' report: the counts in sentences and the findings grouped.
    struct Participants {
        var dryRun: Bool
        var source: String
        var readAt: String
        var counts: [String]
        var groups: [Study.Group]
    }

    init(
        appId: String, timeZone: String, report: StudyMoveInReport?, problems: [ValidationProblem],
        participantReport: ParticipantMoveInReport? = nil, participantProblems: [ValidationProblem] = []
    ) {
        participants = participantReport.map { report in
            Participants(
                dryRun: report.dryRun, source: report.source, readAt: report.readAt, counts: report.counts.sentences(dryRun: report.dryRun),
                groups: Self.groups(report.findings))
        }
        participantProblemReport = ProblemReport("Not all was moved in", toFix: participantProblems.map(ProblemItem.init(inFile:)))
        self.appId = appId
        self.timeZone = timeZone
        dryRun = report?.dryRun ?? true
        hasReport = report != nil
        source = report?.source ?? ""
        readAt = report?.readAt ?? ""
        studies = (report?.studies ?? []).map { study in
            Study(
                studyId: study.studyId, sourceStatus: study.sourceStatus, standing: study.standing(dryRun: report?.dryRun ?? true),
                versions: study.versions.joined(separator: ", "), versionsHere: study.versionsHere, versionCount: study.versions.count,
                activities: study.activities.map { .init(activityId: $0.activityId, versions: $0.versions.joined(separator: ", ")) },
                counts: study.countsSentence,
                groups: Self.groups(study.findings))
        }
        problemReport = ProblemReport("Nothing was moved in", toFix: problems.map(ProblemItem.init(inFile:)))
    }

    /// Findings by what they mean, in the order a team reads them.
    static func groups(_ findings: [MoveInFinding]) -> [Study.Group] {
        MoveInFinding.Effect.reportOrder.compactMap { effect in
            let found = findings.filter { $0.effect == effect }
            return found.isEmpty ? nil : Study.Group(heading: effect.heading.prefix(1).uppercased() + effect.heading.dropFirst(), findings: found)
        }
    }
}
