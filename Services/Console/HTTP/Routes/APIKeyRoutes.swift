import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `/api-keys`: the signed-in admin's API keys for researchers' scripts (the LabKey clients'
/// `apikey`). Every admin has this page for their own keys: a new key is shown once, on the page
/// that made it; the list never shows a secret; a key is revoked from its row.
package struct APIKeyRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/api-keys", use: show)
        router.post("/api-keys", use: create)
        router.post("/api-keys/:keyId/revoke", use: revoke)
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let revoked = request.uri.queryParameters["revoked"] != nil
        return try await pages.signedIn(request, context) { session, _ in
            try await page(session, context: context, notice: revoked ? "The key is revoked: scripts using it are refused from now on." : "")
        }
    }

    @Sendable func create(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, form in
            let name = FormField.trimmed(form?["name"])
            let daysText = FormField.trimmed(form?["days"])
            let days = daysText.isEmpty ? nil : Int(daysText)
            guard daysText.isEmpty || days != nil else {
                return try await page(
                    session, context: context, problems: [.init(pointer: "/expiresInDays", message: "Enter a number of days: 1 to 365.")],
                    name: name, days: daysText, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.createAPIKey(APIKeyRequest(name: name, expiresInDays: days), token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let created):
                return try await page(session, context: context, created: (name, created), status: .created)
            case .failure(let error) where [400, 409, 422].contains(error.status):
                let problems = error.problems.isEmpty
                    ? [ValidationProblem(pointer: "", message: error.message)]
                    : error.problems.map { ValidationProblem(pointer: $0.pointer, message: $0.message) }
                return try await page(
                    session, context: context, problems: problems, name: name, days: daysText, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    @Sendable func revoke(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let keyId = try context.parameters.decoded("keyId")
        return try await pages.signedIn(request, context) { session, _ in
            guard let id = UUID(uuidString: keyId) else { return pages.errorPage(for: .notFound("You have no API key with that id.")) }
            try await pages.api.revokeAPIKey(id, token: session.token, logger: context.logger)
            return PageRenderer.redirect(to: "/api-keys?revoked=1")
        }
    }

    func page(
        _ session: ConsoleSession, context: ServiceRequestContext, created: (name: String, key: APIKeyCreated)? = nil,
        notice: String = "", problems: [ValidationProblem] = [], name: String = "", days: String = "",
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let keys = try await pages.api.apiKeys(token: session.token, logger: context.logger)
        let now = Date()
        let view = APIKeysView(
            keys: keys.map { key in
                let state = key.revokedAt != nil ? "revoked" : key.expiresAt <= now ? "expired" : "live"
                return .init(
                    id: key.id.uuidString.lowercased(), name: key.name, createdAt: StudyPageModels.timestamp(key.createdAt),
                    expiresAt: StudyPageModels.timestamp(key.expiresAt), lastUsedAt: key.lastUsedAt.map(StudyPageModels.timestamp) ?? "never",
                    state: state, live: state == "live")
            },
            hasKeys: !keys.isEmpty,
            created: created.map { .init(name: $0.name, key: $0.key.key, expiresAt: StudyPageModels.timestamp($0.key.expiresAt)) },
            name: name, days: days, notice: notice, hasNotice: !notice.isEmpty,
            problemReport: ProblemReport(heading: "No key was made", problems))
        return pages.render(view, title: "API keys", session: session, status: status)
    }
}

/// `api-keys.mustache`: the admin's own API keys, and the form for a new one.
struct APIKeysView: PageView {
    static let template = "api-keys"

    struct Key {
        var id: String
        var name: String
        var createdAt: String
        var expiresAt: String
        var lastUsedAt: String
        var state: String
        /// Neither revoked nor expired: it can be revoked.
        var live: Bool
    }

    /// The key just made, shown once.
    struct Created {
        var name: String
        var key: String
        var expiresAt: String
    }

    var keys: [Key]
    var hasKeys: Bool
    var created: Created?
    /// What was typed into the form.
    var name: String
    var days: String
    var notice: String
    var hasNotice: Bool
    var problemReport: ProblemReport?
}
