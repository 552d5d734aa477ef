import ConsoleCore
import Foundation
import Hummingbird
import QRCode
import ServiceKitHTTP
import StudyModels

/// The schema app's side of a study (docs/console.md, Schema app):
/// - `GET|POST /studies/new/schema`: a new study made from a schema protocol (file or text);
/// - `GET|POST /studies/{studyId}/schema`: the study's protocol URL and its QR code, the arms with
///   their counts and participants, and importing the protocol again (editors);
/// - `GET /studies/{studyId}/schema/sheet`: the QR code on a page of its own, to print.
/// Everything goes through the admin APIs, which check and map the protocol.
package struct SchemaPageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/new/schema", use: newStudyForm)
        router.post("/studies/new/schema", use: createStudy)
        router.get("/studies/:studyId/schema", use: show)
        router.post("/studies/:studyId/schema", use: reimport)
        router.get("/studies/:studyId/schema/sheet", use: sheet)
    }

    static let assignments = [("block", "Permuted blocks (balanced)"), ("simple", "Simple (independent draws)")]

    // MARK: A new study

    @Sendable func newStudyForm(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            let apps = try await pages.api.apps(token: session.token, logger: context.logger)
            return newStudyPage(
                session, apps: apps, values: ["timeZone": "UTC", "appId": apps.count == 1 ? apps[0].appId : ""], problems: [],
                status: .ok)
        }
    }

    @Sendable func createStudy(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let apps = try await pages.api.apps(token: session.token, logger: context.logger)
            let values = [
                "studyId": FormField.trimmed(form["studyId"]), "appId": FormField.trimmed(form["appId"]),
                "timeZone": FormField.trimmed(form["timeZone"]), "assignment": FormField.trimmed(form["assignment"]),
                "protocol": form.text(file: "protocolFile", orPasted: "protocol"),
            ]
            var problems: [ValidationProblem] = []
            if values["studyId"]!.isEmpty { problems.append(.init(pointer: "", message: "Enter the study's id.")) }
            if values["protocol"]!.isEmpty { problems.append(.init(pointer: "", message: "Choose the protocol's file or paste it.")) }
            guard problems.isEmpty else {
                return newStudyPage(session, apps: apps, values: values, problems: problems, status: .unprocessableContent)
            }
            let studyId = values["studyId"]!
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.importSchema(
                    Array(values["protocol"]!.utf8), into: studyId, appId: values["appId"], timeZone: values["timeZone"].flatMap { $0.isEmpty ? nil : $0 },
                    assignment: Self.assignment(values["assignment"]), token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/schema?imported=1")
            case .failure(let error) where [400, 403, 409, 413, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return newStudyPage(session, apps: apps, values: values, problems: problems, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    func newStudyPage(
        _ session: ConsoleSession, apps: [AppDefinition], values: [String: String], problems: [ValidationProblem],
        status: HTTPResponse.Status
    ) -> Response {
        let view = NewSchemaStudyView(
            hasApps: !apps.isEmpty,
            apps: apps.map { .init(appId: $0.appId, name: $0.name.text(for: "en"), selected: $0.appId == values["appId"]) },
            values: .init(studyId: values["studyId"] ?? "", timeZone: values["timeZone"] ?? "", protocol: values["protocol"] ?? ""),
            assignments: Self.assignmentChoices(values["assignment"]),
            problemReport: Self.report(problems, "The study was not created"))
        return pages.render(view, title: "New study from a schema protocol", session: session, status: status)
    }

    // MARK: A study's schema page

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let imported = request.uri.queryParameters["imported"] == "1"
        let after = request.uri.queryParameters["after"].flatMap { Int64(String($0)) }
        return try await pages.signedIn(request, context) { session, _ in
            try await schemaPage(
                studyId, session: session, context: context, after: after, protocolText: "", problems: [],
                warnings: nil, imported: imported, status: .ok)
        }
    }

    @Sendable func reimport(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let text = form.text(file: "protocolFile", orPasted: "protocol")
            guard !text.isEmpty else {
                return try await schemaPage(
                    studyId, session: session, context: context, after: nil, protocolText: "",
                    problems: [.init(pointer: "", message: "Choose the protocol's file or paste it.")], warnings: nil, imported: false,
                    status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.importSchema(
                    Array(text.utf8), into: studyId, assignment: Self.assignment(FormField.trimmed(form["assignment"])),
                    token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let result):
                return try await schemaPage(
                    studyId, session: session, context: context, after: nil, protocolText: "", problems: [],
                    warnings: result.warnings, imported: true, status: .ok)
            case .failure(let error) where [400, 403, 409, 413, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return try await schemaPage(
                    studyId, session: session, context: context, after: nil, protocolText: text, problems: problems, warnings: nil,
                    imported: false, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    func schemaPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, after: Int64?, protocolText: String,
        problems: [ValidationProblem], warnings: [ValidationProblem]?, imported: Bool, status: HTTPResponse.Status
    ) async throws -> Response {
        async let info = pages.api.schemaInfo(of: studyId, token: session.token, logger: context.logger)
        async let participants = pages.api.schemaParticipants(of: studyId, after: after, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        var view = SchemaView(
            editable: state.editable, protocol: protocolText, imported: imported, assignments: Self.assignmentChoices(nil),
            problemReport: Self.report(problems, "Not imported"), warnings: (warnings ?? []).map { ProblemItem(inFile: $0) },
            hasWarnings: !(warnings ?? []).isEmpty)
        if let info = try await info {
            view.schema = Self.model(info)
            var list = try await participants
            if list.arms.isEmpty, let arms = info.arms {
                // The response service hears of the study when it is first published.
                list.arms = arms.names.map { SchemaParticipantList.ArmCount(arm: $0, participants: 0) }
            }
            let total = list.arms.reduce(0) { $0 + $1.participants }
            view.arms = list.arms.map { arm in
                .init(
                    arm: arm.arm, participants: arm.participants.formatted(),
                    share: total == 0 ? "–" : "\(Int((Double(arm.participants) / Double(total) * 100).rounded())) %")
            }
            view.hasArms = !list.arms.isEmpty
            view.participants = list.participants.map { participant in
                .init(
                    externalId: participant.externalId, arm: participant.arm ?? "–", ordinal: participant.armOrdinal.map { String($0) } ?? "–",
                    status: participant.status, enrolledAt: StudyPageModels.timestamp(participant.enrolledAt),
                    submissions: participant.submissions.formatted())
            }
            view.hasParticipants = !list.participants.isEmpty
            view.next = list.next.map { String($0) }
        }
        return pages.render(view, title: "Schema app · \(state.summary.name)", session: session, state: state, current: "schema", status: status)
    }

    // MARK: The printable sheet

    @Sendable func sheet(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let summary = try await pages.api.study(studyId, token: session.token, logger: context.logger)
            guard let info = try await pages.api.schemaInfo(of: studyId, token: session.token, logger: context.logger) else {
                return pages.errorPage(
                    session, status: .notFound, heading: "Not found", message: "Study \(studyId) was not imported from a schema protocol.")
            }
            return pages.render(SchemaSheetView(name: summary.name, schema: Self.model(info)), title: "Join \(summary.name)", session: session)
        }
    }

    // MARK: Models

    /// The study's URLs and its QR code (an inline SVG: the page needs no second request).
    static func model(_ info: SchemaStudyInfo) -> SchemaView.Schema {
        .init(
            protocolURL: info.protocolURL, postURL: info.postURL, served: info.served,
            qr: (try? QRCode(encoding: info.protocolURL, correction: .medium)).map { SafeHTML.qrCode($0, moduleSize: 6) },
            protocolStudyId: info.protocolStudyId ?? "", activities: info.activities.joined(separator: ", "),
            assignment: info.arms.map { $0.assignment == .block ? "permuted blocks" : "simple draws" },
            armNames: info.arms?.names.joined(separator: ", ") ?? "")
    }

    static func assignment(_ value: String?) -> String? {
        guard let value, assignments.contains(where: { $0.0 == value }) else { return nil }
        return value
    }

    static func assignmentChoices(_ selected: String?) -> [OptionChoice] {
        assignments.map { .init(value: $0.0, label: $0.1, selected: $0.0 == (selected ?? "block")) }
    }

    /// Pointers here are into the protocol (`/modules/1/alerts/duration`), not a draft's page.
    static func report(_ problems: [ValidationProblem], _ outcome: String) -> ProblemReport? {
        ProblemReport(outcome, toFix: problems.map(ProblemItem.init(inFile:)))
    }
}

/// `schema.mustache`: a study imported from a schema protocol, its URLs, arms and participants,
/// and the form that imports the protocol again.
struct SchemaView: PageView {
    static let template = "schema"

    /// What the platform serves the schema app.
    struct Schema {
        var protocolURL: String
        var postURL: String
        var served: Bool
        /// The protocol URL as a QR code.
        var qr: SafeHTML?
        var protocolStudyId: String
        var activities: String
        var assignment: String?
        var armNames: String
    }

    struct Arm {
        var arm: String
        var participants: String
        var share: String
    }

    struct Participant {
        var externalId: String
        var arm: String
        var ordinal: String
        var status: String
        var enrolledAt: String
        var submissions: String
    }

    var editable: Bool
    /// The protocol text of the form.
    var `protocol`: String
    var imported: Bool
    var assignments: [OptionChoice]
    var problemReport: ProblemReport?
    var warnings: [ProblemItem]
    var hasWarnings: Bool
    /// nil: the study was not imported from a schema protocol.
    var schema: Schema?
    var arms: [Arm] = []
    var hasArms = false
    var participants: [Participant] = []
    var hasParticipants = false
    /// Where the next page of participants starts.
    var next: String?
}

/// `schema-new.mustache`: a new study made from a schema protocol.
struct NewSchemaStudyView: PageView {
    static let template = "schema-new"

    struct App {
        var appId: String
        var name: String
        var selected: Bool
    }

    /// What was typed into the form.
    struct Values {
        var studyId: String
        var timeZone: String
        var `protocol`: String
    }

    var hasApps: Bool
    var apps: [App]
    var values: Values
    var assignments: [OptionChoice]
    var problemReport: ProblemReport?
}

/// `schema-sheet.mustache`: the printable sheet with the protocol's QR code.
struct SchemaSheetView: PageView {
    static let template = "schema-sheet"
    var name: String
    var schema: SchemaView.Schema
}
