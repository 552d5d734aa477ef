import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// An activity's tools besides its page: `GET|POST /studies/{studyId}/import` puts an activity
/// designed elsewhere into the draft: a LabKey/MyStudies design (the JSON the apps read from
/// `/StudyMetaData/activity`) through `PUT /admin/v1/studies/{studyId}/draft/activities/{id}`,
/// or a Sage assessment through `PUT .../draft/assessments/{identifier}`, each validated whole;
/// `GET /studies/{studyId}/activities/{activityId}/preview` shows it screen by screen, and
/// `GET .../assessment.json` downloads the Sage assessment it was imported from.
package struct ActivityToolRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/import", use: form)
        router.post("/studies/:studyId/import", use: importDesign)
        router.get("/studies/:studyId/activities/:activityId/preview", use: preview)
        router.get("/studies/:studyId/activities/:activityId/assessment.json", use: assessment)
    }

    /// The Sage assessment an activity was imported from, as imported, to download.
    @Sendable func assessment(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let activityId = try context.parameters.decoded("activityId")
        return try await pages.signedIn(request, context) { session, _ in
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.assessment(activityId, of: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let body):
                let name = String(String.UnicodeScalarView(activityId.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }))
                return Response(
                    status: .ok,
                    headers: [.contentType: "application/json; charset=utf-8", .contentDisposition: "attachment; filename=\"\(name).json\""],
                    body: .init(byteBuffer: body))
            case .failure(let error) where error.status == 404:
                return pages.errorPage(session, status: .notFound, heading: "Not found", message: "The study has no activity \(activityId) imported from a Sage assessment.")
            case .failure(let error):
                throw error
            }
        }
    }

    @Sendable func preview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let activityId = try context.parameters.decoded("activityId")
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context)
            guard case .array(let activities) = state.draft[pointer: JSONPointer(tokens: ["activities"])],
                let activity = activities.first(where: { $0["activityId"] == .string(activityId) })
            else {
                return pages.errorPage(session, status: .notFound, heading: "Not found", message: "The study has no activity \(activityId).")
            }
            let language = request.uri.queryParameters["lang"] == "es" ? "es" : "en"
            let view = PreviewView(
                activityId: activityId, activityTitle: ActivityPreview.text(activity["title"], language),
                screens: ActivityPreview.screens(activity, language: language))
            return pages.render(view, title: "Preview · \(activityId)", session: session, state: state, current: "activities/\(activityId)")
        }
    }

    @Sendable func form(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await importPage(studyId, session: session, context: context, activityId: "", design: "", problems: [], status: .ok)
        }
    }

    @Sendable func importDesign(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            var activityId = FormField.trimmed(form?["activityId"])
            let design = (form ?? FormFields()).text(file: "designFile", orPasted: "design")
            if FormField.trimmed(form?["format"]) == "sage" {
                // A Sage assessment names its activity: its identifier, unless the form names one.
                if activityId.isEmpty, let identifier = (try? JSONValue.parse(Array(design.utf8), budget: .activityDocument))?["identifier"]?.string {
                    activityId = identifier
                }
                return try await importAssessment(studyId, activityId: activityId, document: design, session: session, context: context)
            }
            guard !activityId.isEmpty, !design.isEmpty else {
                return try await importPage(
                    studyId, session: session, context: context, activityId: activityId, design: design,
                    problems: [.init(pointer: "", message: "Enter the activity's id, and choose its design file or paste it.")], status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome {
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

    func importAssessment(
        _ studyId: String, activityId: String, document: String, session: ConsoleSession, context: ServiceRequestContext
    ) async throws -> Response {
        guard !activityId.isEmpty, !document.isEmpty else {
            return try await importPage(
                studyId, session: session, context: context, activityId: activityId, design: document, sage: true,
                problems: [.init(pointer: "", message: "Choose the assessment's file or paste it (its identifier becomes the activity id).")],
                status: .unprocessableContent)
        }
        let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
            try await pages.api.importAssessment(activityId, into: studyId, document: Array(document.utf8), token: session.token, logger: context.logger)
        }
        switch outcome {
        case .success:
            return PageRenderer.redirect(
                to: "/studies/\(AdminAPIClient.segment(studyId))/activities/\(AdminAPIClient.segment(activityId))?saved=1")
        case .failure(let error) where [400, 404, 409, 413, 422].contains(error.status):
            let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
            return try await importPage(
                studyId, session: session, context: context, activityId: activityId, design: document, sage: true, problems: problems,
                status: .unprocessableContent)
        case .failure(let error):
            throw error
        }
    }

    func importPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, activityId: String, design: String, sage: Bool = false,
        problems: [ValidationProblem], status: HTTPResponse.Status
    ) async throws -> Response {
        let state = try await pages.load(studyId, session: session, context: context)
        // Pointers here are into the pasted design (`/activity/steps/2/key`), not the draft's pages.
        let view = ImportView(
            activityId: activityId, design: design, sage: sage, editable: state.editable,
            problemReport: ProblemReport("Not imported", toFix: problems.map(ProblemItem.init(inFile:))))
        return pages.render(
            view, title: "Import an activity · \(state.summary.name)", session: session, state: state, current: "activities/import", status: status)
    }
}

/// `preview.mustache`: an activity screen by screen, as the app shows it.
struct PreviewView: PageView {
    static let template = "preview"
    var activityId: String
    var activityTitle: String
    var screens: [ActivityPreview.Screen]
}

/// `import.mustache`: an activity designed elsewhere, or a Sage assessment, pasted in.
struct ImportView: PageView {
    static let template = "import"
    var activityId: String
    /// The pasted design, kept when it was refused.
    var design: String
    /// The design is a Sage assessment.
    var sage: Bool
    var editable: Bool
    var problemReport: ProblemReport?
}
