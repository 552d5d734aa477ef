import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// A study's FHIR API clients (`/studies/{studyId}/fhir-clients`, docs/fhir.md, Authorisation):
/// the health systems' backend services that read the study by SMART Backend Services. Viewers
/// see them; a study admin registers one with its public keys (pasted, or its JWKS file chosen)
/// and revokes one from its row. A private key is refused by the response service, which says so.
package struct FHIRClientRoutes: Sendable {
    let pages: ConsolePages

    /// What the form reads of a JWKS: a set of a few public keys is a few KiB.
    static let maxJWKSBytes = 64 << 10

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/fhir-clients", use: show)
        router.post("/studies/:studyId/fhir-clients", use: register)
        router.post("/studies/:studyId/fhir-clients/:clientId/revoke", use: revoke)
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let registered = request.uri.queryParameters["registered"].map(String.init)
        let revoked = request.uri.queryParameters["revoked"] != nil
        return try await pages.signedIn(request, context) { session, _ in
            try await page(
                studyId, session: session, context: context, registered: registered,
                notice: revoked ? "The client is revoked: its tokens are refused from now on." : "")
        }
    }

    @Sendable func register(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let name = FormField.trimmed(form["name"])
            let jwksText = form.text(file: "jwksFile", orPasted: "jwks")
            let deidentified = form["deidentified"] == "yes"
            let typed = Typed(name: name, jwks: jwksText.utf8.count <= Self.maxJWKSBytes ? jwksText : "", deidentified: deidentified)
            var problems: [ValidationProblem] = []
            if name.isEmpty { problems.append(.init(pointer: "/name", message: "Enter a name for the client (who runs it, and what for).")) }
            var jwks: JSONValue?
            if jwksText.utf8.count > Self.maxJWKSBytes {
                problems.append(.init(pointer: "/jwks", message: "The keys are larger than 64 KiB: a key set holds a few public keys."))
            } else if jwksText.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                problems.append(.init(pointer: "/jwks", message: "Paste the client's public keys, or choose its JWKS file."))
            } else if let parsed = try? JSONValue.parse(
                Array(jwksText.utf8), budget: .init(maxBytes: Self.maxJWKSBytes, maxNodes: 4_096, maxDepth: 8)), parsed.object != nil
            {
                jwks = parsed
            } else {
                problems.append(.init(
                    pointer: "/jwks", message: #"The keys are not a JSON Web Key Set: it is JSON, {"keys": [ ... ]}, as the client's vendor gives it."#))
            }
            guard problems.isEmpty, let jwks else {
                return try await page(studyId, session: session, context: context, typed: typed, problems: problems, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.registerFHIRClient(
                    SMARTClientRegistration(name: name, jwks: jwks, deidentified: deidentified), in: studyId, token: session.token,
                    logger: context.logger)
            }
            switch outcome {
            case .success(let client):
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/fhir-clients?registered=\(AdminAPIClient.segment(client.clientId))")
            case .failure(let error) where [400, 422].contains(error.status):
                let refused = error.problems.isEmpty
                    ? [ValidationProblem(pointer: "/jwks", message: error.message)]
                    : error.problems.map { ValidationProblem(pointer: $0.pointer, message: $0.message) }
                return try await page(studyId, session: session, context: context, typed: typed, problems: refused, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    @Sendable func revoke(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let clientId = try context.parameters.decoded("clientId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pages.api.revokeFHIRClient(clientId, in: studyId, token: session.token, logger: context.logger)
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/fhir-clients?revoked=1#clients")
        }
    }

    /// What was typed into the form, shown again when it is refused.
    struct Typed {
        var name = ""
        var jwks = ""
        var deidentified = false
    }

    /// The fields a problem's pointer names, so the list links to each.
    static let fields: [String: (id: String, label: String)] = [
        "/name": ("name", "Name"), "/jwks": ("jwks", "Public keys"), "/deidentified": ("deidentified", "De-identified"),
    ]

    func page(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, registered: String? = nil, notice: String = "",
        typed: Typed = Typed(), problems: [ValidationProblem] = [], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        async let listed = pages.api.fhirClients(of: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let clients = try await listed
        let items = problems.map { problem -> ProblemItem in
            var item = ProblemItem(problem)
            // A key's problem names its place in the set (`/jwks/keys/0/d`): the field, and the key.
            let field = Self.fields.first { problem.pointer == $0.key || problem.pointer.hasPrefix($0.key + "/") }
            if let field {
                item.href = "#\(field.value.id)"
                item.label = field.value.label
                // `/jwks/keys/0/d`: said as the key's place in the set and its member.
                let place = problem.pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst(3)
                if let index = place.first.flatMap({ Int($0) }) {
                    let member = place.dropFirst().joined(separator: "/")
                    item.message = member.isEmpty ? "key \(index + 1) \(problem.message)" : "in key \(index + 1), \(member) \(problem.message)"
                }
            }
            return item
        }
        // Ids compared by their scalars, as identities are.
        func isRegistered(_ client: SMARTClientView) -> Bool { registered.map { client.clientId.unicodeScalars.elementsEqual($0.unicodeScalars) } ?? false }
        let just = clients.first(where: isRegistered)
        let view = FHIRClientsView(
            clients: clients.map { client in
                .init(
                    clientId: client.clientId, name: client.name, keys: client.keys.joined(separator: ", "),
                    access: client.deidentified ? "De-identified, by Bulk Data export only" : "Reads the study's resources",
                    createdAt: StudyPageModels.timestamp(client.createdAt), createdBy: client.createdBy,
                    state: client.revokedAt.map { "Revoked \(StudyPageModels.timestamp($0))" } ?? "Live", live: client.revokedAt == nil,
                    isNew: isRegistered(client))
            },
            hasClients: !clients.isEmpty, registered: just.map { .init(name: $0.name, clientId: $0.clientId, tokenURL: $0.tokenURL) },
            mayRegister: (state.role ?? .viewer) >= .studyAdmin, typed: typed, notice: notice, hasNotice: !notice.isEmpty,
            problemReport: ProblemReport("No client was registered", toFix: items))
        return pages.render(
            view, title: "FHIR API clients · \(state.summary.name)", session: session, state: state, current: "fhir-clients", status: status)
    }
}

/// `fhir-clients.mustache`: the study's FHIR API clients, and the form for a new one.
struct FHIRClientsView: PageView {
    static let template = "fhir-clients"

    struct Client {
        var clientId: String
        var name: String
        var keys: String
        var access: String
        var createdAt: String
        var createdBy: String
        var state: String
        /// Not revoked: it can be.
        var live: Bool
        /// The client just registered.
        var isNew: Bool
    }

    /// The client just registered: what its operator needs to sign in.
    struct Registered {
        var name: String
        var clientId: String
        var tokenURL: String
    }

    var clients: [Client]
    var hasClients: Bool
    var registered: Registered?
    var mayRegister: Bool
    var typed: FHIRClientRoutes.Typed
    var notice: String
    var hasNotice: Bool
    var problemReport: ProblemReport?
}
