import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// An activity's tools besides its page: `GET|POST /studies/{studyId}/import` puts an activity
/// designed elsewhere (a LabKey/MyStudies design, the JSON the apps read from
/// `/StudyMetaData/activity`) into the draft through
/// `PUT /admin/v1/studies/{studyId}/draft/activities/{activityId}`, which validates it whole;
/// `GET /studies/{studyId}/activities/{activityId}/preview` shows it screen by screen.
package struct ActivityToolRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/import", use: form)
        router.post("/studies/:studyId/import", use: importDesign)
        router.get("/studies/:studyId/activities/:activityId/preview", use: preview)
    }

    @Sendable func preview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        let activityId = try context.parameters.require("activityId")
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context)
            guard case .array(let activities) = state.draft[pointer: JSONPointer(tokens: ["activities"])],
                let activity = activities.first(where: { $0["activityId"] == .string(activityId) })
            else {
                return pages.errorPage(session, status: .notFound, heading: "Not found", message: "The study has no activity \(activityId).")
            }
            let language = request.uri.queryParameters["lang"] == "es" ? "es" : "en"
            var page = pages.studyPage(
                title: "Preview · \(activityId)", session: session, summary: state.summary, role: state.role, sections: state.sections,
                current: "activities/\(activityId)")
            page["activityId"] = activityId
            page["activityTitle"] = ActivityPreview.text(activity["title"], language)
            page["screens"] = ActivityPreview.screens(activity, language: language)
            return pages.renderer.page("preview", page)
        }
    }

    @Sendable func form(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await importPage(studyId, session: session, context: context, activityId: "", design: "", problems: [], status: .ok)
        }
    }

    @Sendable func importDesign(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let activityId = FormField.trimmed(form?["activityId"])
            let design = (form ?? FormFields()).text(file: "designFile", orPasted: "design")
            guard !activityId.isEmpty, !design.isEmpty else {
                return try await importPage(
                    studyId, session: session, context: context, activityId: activityId, design: design,
                    problems: [.init(pointer: "", message: "Enter the activity's id, and choose its design file or paste it.")], status: .unprocessableContent)
            }
            let outcome = await ConsolePages.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.importActivity(activityId, into: studyId, design: Array(design.utf8), token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/activities/\(AdminAPIClient.segment(activityId))?saved=1")
            case .failure(let error) where [400, 409, 413, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return try await importPage(
                    studyId, session: session, context: context, activityId: activityId, design: design, problems: problems,
                    status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    func importPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, activityId: String, design: String,
        problems: [ValidationProblem], status: HTTPResponse.Status
    ) async throws -> Response {
        let state = try await pages.load(studyId, session: session, context: context)
        var page = pages.studyPage(
            title: "Import an activity · \(state.summary.name)", session: session, summary: state.summary, role: state.role,
            sections: state.sections, current: "activities/import")
        page["activityId"] = activityId
        page["design"] = design
        page["editable"] = state.editable
        // Pointers here are into the pasted design (`/activity/steps/2/key`), not the draft's pages.
        page["problems"] = problems.map(StudyPageModels.item)
        page["hasProblems"] = !problems.isEmpty
        page["problemsHeading"] = "Not imported: \(problems.count == 1 ? "1 thing" : "\(problems.count) things") to fix"
        return pages.renderer.page("import", page, status: status)
    }
}
