import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `GET|POST /apps/{appId}/move-in`: a super-admin moves studies in from a MyStudies deployment
/// (docs/moving-in.md). The file `studystack-import studies read` wrote is sent with the zone the
/// source's schedules were written in, as a dry run or as the import, through
/// `POST /admin/v1/apps/{appId}/move-in/studies`; the page shows the report.
package struct MoveInPageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/apps/:appId/move-in", use: form)
        router.post("/apps/:appId/move-in", use: run)
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
            let outcome = await ConsolePages.outcome { () async throws(AdminAPIError) in
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

    init(appId: String, timeZone: String, report: StudyMoveInReport?, problems: [ValidationProblem]) {
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
                groups: MoveInFinding.Effect.reportOrder.compactMap { effect in
                    let found = study.findings.filter { $0.effect == effect }
                    return found.isEmpty ? nil : Study.Group(heading: effect.heading.prefix(1).uppercased() + effect.heading.dropFirst(), findings: found)
                })
        }
        problemReport = ProblemReport("Nothing was moved in", toFix: problems.map(ProblemItem.init))
    }
}
