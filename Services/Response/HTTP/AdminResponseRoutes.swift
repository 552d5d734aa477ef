import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's responses and their forwarding (admin API): viewers list responses and see how
/// forwarding stands; study admins reprocess failed responses and set the forwarding target
/// (the original left both to folder admins).
package struct AdminResponseRoutes {
    package let responses: ResponseAdminStore
    package let reprocessing: ResponseReprocessing
    package let forwarding: ForwardingStore
    /// Which forwarding targets may be named.
    package let addresses: OutboundAddressPolicy

    package init(
        responses: ResponseAdminStore,
        reprocessing: ResponseReprocessing, forwarding: ForwardingStore, addresses: OutboundAddressPolicy
    ) {
        self.responses = responses
        self.reprocessing = reprocessing
        self.forwarding = forwarding
        self.addresses = addresses
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.responses, use: list)
        routes.on(AdminCalls.reprocess, use: reprocess)
        routes.on(AdminCalls.dailyResponses, use: daily)
        routes.on(AdminCalls.participantNumbers, use: participantNumbers)
        routes.on(AdminCalls.forwarding, use: showForwarding)
        routes.on(AdminCalls.setForwarding, use: setForwarding)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ResponseSummaryList {
        let query = request.uri.formParameters
        let status = query["status"].map { String($0).lowercased() }
        if let status, !ResponseAdminStore.statuses.contains(status) {
            throw APIError.badRequest("status must be pending, processed, error or forwarded", field: "status")
        }
        guard let after = query["after"].map({ Int64(String($0)) }) ?? 0, after >= 0 else {
            throw APIError.badRequest("after must be a response id", field: "after")
        }
        guard let limit = query["limit"].map({ Int(String($0)) }) ?? 100, (1...1000).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 1000", field: "limit")
        }
        var filter = ResponseAdminStore.Filter(status: status)
        filter.participant = try query["participant"].map(ParticipantQuery.participantNumber)
        if let text = query["activity"] {
            let activity = String(text)
            guard !activity.isEmpty, activity.utf8.count <= 200 else {
                throw APIError.badRequest("activity must be an activity id", field: "activity")
            }
            filter.activity = activity
        }
        filter.appTokenSHA256 = try query["appTokenSHA256"].map(ParticipantQuery.appTokenSHA256)
        return ResponseSummaryList(responses: try await responses.list(studyKey: study.key, filter: filter, after: after, limit: limit))
    }

    /// Participant numbers by the hash of the participant id (`appTokenSHA256`, up to 100, comma
    /// separated) or the hash of one number (`participant`) (viewer).
    @Sendable package func participantNumbers(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ParticipantNumbers {
        let query = request.uri.formParameters
        switch (query["appTokenSHA256"], query["participant"]) {
        case (let list?, nil):
            let hashes = try ParticipantQuery.appTokenSHA256s(list, most: ResponseAdminStore.maxNumberLookups)
            return try await responses.participantNumbers(studyKey: study.key, hashes: hashes)
        case (nil, let text?):
            return try await responses.participantNumber(studyKey: study.key, number: try ParticipantQuery.participantNumber(text))
        default:
            throw APIError.badRequest("name either appTokenSHA256 or participant", field: "appTokenSHA256")
        }
    }

    /// Responses per day and activity, counts only (viewer): `days` from 1 to 366, default 30.
    @Sendable package func daily(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> DailyResponses {
        guard let days = request.uri.queryParameters["days"].map({ Int(String($0)) }) ?? 30, (1...366).contains(days) else {
            throw APIError.badRequest("days must be 1 to 366", field: "days")
        }
        return try await responses.daily(studyKey: study.key, days: days)
    }

    @Sendable package func reprocess(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ReprocessOutcome {
        let body = try await request.body.collect(upTo: 1 << 20)
        guard let wanted = try? JSONDecoder().decode(ReprocessRequest.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be {\"ids\": [response ids]}", field: "ids")
        }
        guard !wanted.ids.isEmpty, wanted.ids.count <= 10_000 else {
            throw APIError.badRequest(wanted.ids.isEmpty ? "No responses to reprocess" : "at most 10,000 ids at once", field: "ids")
        }
        if let version = wanted.againstVersion, !StudyActivity.isValidVersionLabel(version) {
            throw APIError.badRequest(
                "againstVersion must be a version label like 1.2 or 3: letters, digits, dots, hyphens or underscores",
                field: "againstVersion")
        }
        return try await reprocessing.reprocess(wanted.ids, study: study, actor: admin.email, againstVersion: wanted.againstVersion)
    }

    @Sendable package func showForwarding(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ForwardingView {
        return try await view(study)
    }

    @Sendable package func setForwarding(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ForwardingView {
        let body = try await request.body.collect(upTo: 16 * 1024)
        guard let wanted = try? JSONDecoder().decode(ForwardingTarget.Request.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be a JSON object with at least \"type\"", field: "type")
        }
        let stored = try await forwarding.settings(studyKey: study.key)?.target
        let settings: (target: ForwardingTarget, format: ForwardingFormat)
        do {
            settings = try ForwardingTarget.parseSettings(wanted, stored: stored, addresses: addresses)
        } catch {
            throw ResponseAdminError.forwardingInvalid(error.problems.map { ValidationProblem(pointer: "/\($0.field)", message: $0.message) })
        }
        try await forwarding.save(settings.target, format: settings.format, studyKey: study.key, actor: admin.email)
        return try await view(study)
    }

    private func view(_ study: StudyCatalog.Study) async throws -> ForwardingView {
        let settings = try await forwarding.settings(studyKey: study.key)
        let status = try await forwarding.status(studyKey: study.key)
        var view = ForwardingView(type: "disabled", updatedBy: settings?.updatedBy, updatedAt: settings?.updatedAt, status: status)
        view.format = settings?.format.rawValue ?? ForwardingFormat.json.rawValue
        switch settings?.target {
        case .basic(let url, let username, _)?:
            view.type = "basic"
            view.url = url.absoluteString
            view.username = username
            view.password = ForwardingTarget.redacted
        case .oauth(let tokenURL, let field, let header, let url)?:
            view.type = "oauth"
            view.tokenRequestURL = tokenURL.absoluteString
            view.tokenField = field
            view.header = header
            view.url = url.absoluteString
        default:
            break
        }
        return view
    }
}

extension ResponseSummaryList: ResponseEncodable {}
extension ParticipantNumbers: ResponseEncodable {}
extension ReprocessOutcome: ResponseEncodable {}
extension ForwardingView: ResponseEncodable {}
extension DailyResponses: ResponseEncodable {}
