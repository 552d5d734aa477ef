import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// How a study's responses are getting on (`/studies/{studyId}/processing`), over the response
/// service's admin API: the responses that failed processing with their errors, reprocessed from
/// here once the design is fixed (study admin); where processed responses are forwarded and how
/// that stands (study admins change it); participant-property values uploaded as CSV (editor), a
/// refused file listing each bad line; and Sage archives refused for their content, kept with
/// why, reprocessed from here once the study is mended (editor).
package struct ProcessingRoutes: Sendable {
    let pages: ConsolePages

    /// The most failed responses one page lists.
    static let failedPageSize = 100
    /// The most refused Sage archives one page lists, newest first.
    static let refusedPageSize = 50

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/processing", use: show)
        router.post("/studies/:studyId/processing/reprocess", use: reprocess)
        router.post("/studies/:studyId/processing/forwarding", use: setForwarding)
        router.post("/studies/:studyId/processing/properties", use: uploadProperties)
        router.post("/studies/:studyId/processing/sage/:refusalId/reprocess", use: reprocessSageArchive)
    }

    /// What a form's redirect says was done.
    static func notice(_ done: String, count: String) -> String {
        switch done {
        case "reprocessed": "\(count) responses went back to the queue; they are processed again, design included, in a few seconds."
        case "forwarding": "The forwarding settings are saved."
        case "properties": "The participant properties are stored (\(count) rows)."
        case "sage": "The Sage archive is stored now; its answers are processed into the study's tables in a few seconds."
        default: ""
        }
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        let done = parameters["done"].map(String.init) ?? ""
        let count = String((parameters["count"].map(String.init) ?? "").prefix(10).filter(\.isNumber))
        let after = parameters["after"].flatMap { Int64(String($0)) } ?? 0
        // The failed responses of one activity (the data page links each activity's).
        let activity = parameters["activity"].map { String(String($0).prefix(200)) } ?? ""
        return try await pages.signedIn(request, context) { session, _ in
            try await page(
                studyId, session: session, context: context, after: after, notice: Self.notice(done, count: count), activity: activity)
        }
    }

    @Sendable func reprocess(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let ids = (form?.all("id") ?? []).compactMap { Int64($0) }.prefix(Self.failedPageSize)
            guard !ids.isEmpty else {
                return try await page(
                    studyId, session: session, context: context,
                    problems: [.init(pointer: "/id", message: "Choose the responses to reprocess.")], status: .unprocessableContent)
            }
            let version = FormField.trimmed(form?["againstVersion"])
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.reprocess(
                    Array(ids), in: studyId, againstVersion: version.isEmpty ? nil : version, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let done):
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/processing?done=reprocessed&count=\(done.countReprocessed)")
            case .failure(let error):
                return try await refused(error, studyId, session: session, context: context, againstVersion: version)
            }
        }
    }

    @Sendable func reprocessSageArchive(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let refusalId = try context.parameters.decoded("refusalId")
        return try await pages.signedIn(request, context) { session, _ in
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.reprocessRefusedSageArchive(refusalId, in: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/processing?done=sage#refused-archives")
            case .failure(let error):
                return try await refused(error, studyId, session: session, context: context)
            }
        }
    }

    /// What forwarding can send, as the form offers it.
    static let formats: [(value: String, label: String)] = [
        ("json", "The app's answers as JSON, as LabKey forwarded them"),
        ("fhir", "A FHIR R4 transaction to a FHIR server's base (Patient, Questionnaire, QuestionnaireResponse)"),
    ]

    @Sendable func setForwarding(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let type = FormField.trimmed(form?["type"])
            var settings = ["type": type.isEmpty ? "Disabled" : type]
            let fields =
                switch type.lowercased() {
                case "basic": ["url", "username", "password"]
                case "oauth": ["tokenRequestURL", "tokenField", "header", "url"]
                default: [String]()
                }
            for field in fields { settings[field] = field == "password" ? form?[field] ?? "" : FormField.trimmed(form?[field]) }
            let format = FormField.trimmed(form?["format"])
            settings["format"] = format.isEmpty ? "json" : format
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.setForwarding(settings, in: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/processing?done=forwarding#forwarding")
            case .failure(let error):
                var kept = settings
                kept["password"] = nil
                return try await refused(error, studyId, session: session, context: context, forwardingForm: kept)
            }
        }
    }

    @Sendable func uploadProperties(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let csv = (form ?? FormFields()).text(file: "csvFile", orPasted: "csv")
            guard !csv.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                return try await page(
                    studyId, session: session, context: context,
                    problems: [.init(pointer: "/csv", message: "Choose a CSV file or paste its lines.")], status: .unprocessableContent)
            }
            let lines = CSV.records(csv).count - 1
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.uploadParticipantProperties(csv: csv, in: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/processing?done=properties&count=\(max(lines, 0))")
            case .failure(let error):
                return try await refused(error, studyId, session: session, context: context)
            }
        }
    }

    /// The page again with what the response service refused, each problem in its words; a
    /// refused CSV names its lines ("line 3, surgeryDate: ...").
    func refused(
        _ error: AdminAPIError, _ studyId: String, session: ConsoleSession, context: ServiceRequestContext,
        forwardingForm: [String: String]? = nil, againstVersion: String = ""
    ) async throws -> Response {
        guard [400, 404, 409, 413, 415, 422].contains(error.status) else { throw error }
        let problems =
            error.problems.isEmpty
            ? [ValidationProblem(pointer: "", message: error.message)]
            : error.problems.map { ValidationProblem(pointer: "", message: Self.located($0.pointer, $0.message)) }
        return try await page(
            studyId, session: session, context: context, problems: problems, forwardingForm: forwardingForm,
            againstVersion: againstVersion, status: .unprocessableContent)
    }

    /// `/lines/3/surgeryDate` → "Line 3, surgeryDate: ..."; other pointers name their field.
    static func located(_ pointer: String, _ message: String) -> String {
        let parts = pointer.split(separator: "/").map(String.init)
        // Line 0 is the file as a whole (a study without properties, say).
        if parts.count >= 2, parts[0] == "lines" || parts[0] == "rows", parts[1] == "0" { return message }
        if parts.count >= 2, parts[0] == "lines" || parts[0] == "rows" {
            let field = parts.count > 2 && !parts[2].isEmpty ? ", \(parts[2])" : ""
            return "\(parts[0] == "lines" ? "Line" : "Row") \(parts[1])\(field): \(message)"
        }
        return parts.isEmpty ? message : "\(parts.joined(separator: " ")): \(message)"
    }

    func page(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, after: Int64 = 0, notice: String = "",
        problems: [ValidationProblem] = [], forwardingForm: [String: String]? = nil, againstVersion: String = "",
        status: HTTPResponse.Status = .ok, activity: String = ""
    ) async throws -> Response {
        async let failed = pages.api.responses(
            of: studyId,
            query: [
                ("status", "error"), ("activity", activity), ("after", after > 0 ? String(after) : ""), ("limit", String(Self.failedPageSize)),
            ],
            token: session.token, logger: context.logger)
        async let forwarding = pages.api.forwarding(of: studyId, token: session.token, logger: context.logger)
        async let kept = pages.api.refusedSageArchives(of: studyId, limit: Self.refusedPageSize, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let role = state.role ?? .viewer
        let failures = try await failed
        let settings = try await forwarding
        let refusedArchives = try await kept.refused
        let shown = forwardingForm ?? [
            "type": settings.type, "url": settings.url ?? "", "username": settings.username ?? "",
            "tokenRequestURL": settings.tokenRequestURL ?? "", "tokenField": settings.tokenField ?? "", "header": settings.header ?? "",
            "format": settings.format,
        ]
        let type = (shown["type"] ?? "disabled").lowercased()
        let format = (shown["format"] ?? "json").lowercased()
        let view = ProcessingView(
            failed: failures.map { response in
                .init(
                    id: String(response.id), participantId: String(response.participantId), activityId: response.activityId,
                    version: response.processedAgainstVersion.map { "\(response.version) (last processed against \($0))" }
                        ?? response.version,
                    receivedAt: StudyPageModels.timestamp(response.receivedAt), error: response.errorMessage ?? "",
                    participantHref: ResponseDataRoutes.tableHref(studyId, response.activityId)
                        + AdminAPIClient.queryString([("participant", String(response.participantId))]))
            },
            hasFailed: !failures.isEmpty,
            failedNextHref: failures.count == Self.failedPageSize
                ? failures.last.map {
                    "/studies/\(AdminAPIClient.segment(studyId))/processing"
                        + AdminAPIClient.queryString([("activity", activity), ("after", String($0.id))])
                } : nil,
            activity: activity.isEmpty ? nil : activity,
            mayReprocess: role >= .studyAdmin,
            againstVersion: againstVersion,
            refused: refusedArchives.map { archive in
                .init(
                    refusalId: archive.refusalId, participantId: String(archive.participantId),
                    door: archive.door == "upload" ? "Bridge upload" : "Archive upload",
                    receivedAt: StudyPageModels.timestamp(archive.receivedAt), reason: archive.reason,
                    timesRefused: archive.timesRefused > 1 ? "\(archive.timesRefused) times" : "once",
                    state: archive.archiveId == nil ? "Kept, not stored" : "Stored after reprocessing", stored: archive.archiveId != nil)
            },
            hasRefused: !refusedArchives.isEmpty,
            mayReprocessArchives: role >= .editor,
            forwarding: .init(
                type: settings.type, url: shown["url"] ?? "", username: shown["username"] ?? "",
                tokenRequestURL: shown["tokenRequestURL"] ?? "", tokenField: shown["tokenField"] ?? "", header: shown["header"] ?? "",
                hasPassword: settings.password != nil, updatedBy: settings.updatedBy ?? "",
                updatedAt: settings.updatedAt.map(StudyPageModels.timestamp) ?? "", wasUpdated: settings.updatedAt != nil,
                waiting: settings.status.waiting.formatted(), failing: settings.status.failing.formatted(),
                hasFailing: settings.status.failing > 0, forwarded: settings.status.forwarded.formatted(),
                lastForwardedAt: settings.status.lastForwardedAt.map(StudyPageModels.timestamp) ?? "never",
                lastError: settings.status.lastError ?? "", hasLastError: settings.status.lastError != nil, enabled: settings.type != "disabled",
                sentAs: Self.formats.first { $0.value == settings.format }?.label ?? settings.format),
            types: [("disabled", "Off"), ("basic", "HTTPS with a username and password"), ("oauth", "HTTPS with an OAuth token")]
                .map { .init(value: $0.0, label: $0.1, selected: $0.0 == type) },
            formats: Self.formats.map { .init(value: $0.value, label: $0.label, selected: $0.value == format) },
            mayForward: role >= .studyAdmin, mayUpload: role >= .editor, notice: notice, hasNotice: !notice.isEmpty,
            problemReport: ProblemReport(heading: "Nothing was changed", problems))
        return pages.render(
            view, title: "Processing and forwarding · \(state.summary.name)", session: session, state: state, current: "processing", status: status)
    }
}

/// `processing.mustache`: the responses that failed processing, the forwarding settings, and the
/// participant properties' upload.
struct ProcessingView: PageView {
    static let template = "processing"

    struct Failure {
        var id: String
        var participantId: String
        var activityId: String
        var version: String
        var receivedAt: String
        var error: String
        var participantHref: String
    }

    struct Forwarding {
        var type: String
        var url: String
        var username: String
        var tokenRequestURL: String
        var tokenField: String
        var header: String
        var hasPassword: Bool
        var updatedBy: String
        var updatedAt: String
        var wasUpdated: Bool
        var waiting: String
        var failing: String
        var hasFailing: Bool
        var forwarded: String
        var lastForwardedAt: String
        var lastError: String
        var hasLastError: Bool
        var enabled: Bool
        /// What each response is sent as, in words.
        var sentAs: String
    }

    /// A Sage archive refused for its content and kept.
    struct RefusedArchive {
        var refusalId: String
        var participantId: String
        var door: String
        var receivedAt: String
        var reason: String
        var timesRefused: String
        var state: String
        var stored: Bool
    }

    var failed: [Failure]
    var hasFailed: Bool
    var failedNextHref: String?
    /// Only this activity's failed responses are listed.
    var activity: String?
    var mayReprocess: Bool
    /// What was typed in "Process against version", kept when the service refused it.
    var againstVersion: String
    var refused: [RefusedArchive]
    var hasRefused: Bool
    var mayReprocessArchives: Bool
    var forwarding: Forwarding
    var types: [OptionChoice]
    var formats: [OptionChoice]
    var mayForward: Bool
    var mayUpload: Bool
    var notice: String
    var hasNotice: Bool
    var problemReport: ProblemReport?
}
