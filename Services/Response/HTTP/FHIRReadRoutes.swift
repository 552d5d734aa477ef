import FHIR
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JSONText
import ResponseCore
import ServiceKitHTTP

/// The FHIR R4 API's reads (docs/fhir.md): `Authorization: Bearer` with a token from the SMART
/// token endpoint; resources as `application/fhir+json`, refusals as `OperationOutcome`s.
package struct FHIRReadRoutes {
    package let reading: FHIRReading
    package let tokenURL: String

    package init(reading: FHIRReading, tokenURL: String) {
        self.reading = reading
        self.tokenURL = tokenURL
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/fhir/r4/metadata", use: metadata)
        router.get("/fhir/r4/ResearchStudy/:id", use: researchStudy)
        router.get("/fhir/r4/Patient/:id", use: patient)
        router.get("/fhir/r4/ResearchSubject/:id", use: researchSubject)
        router.get("/fhir/r4/QuestionnaireResponse/:id", use: questionnaireResponse)
        router.get("/fhir/r4/Questionnaire/:id", use: questionnaire)
        router.get("/fhir/r4/Questionnaire/:id/_history", use: questionnaireHistory)
        router.get("/fhir/r4/Questionnaire/:id/_history/:versionId", use: questionnaireVersion)
        router.get("/fhir/r4/Observation/:id", use: observation)
        router.get("/fhir/r4/Consent/:id", use: consent)
        router.get("/fhir/r4/Binary/:id", use: binary)
        for type in ["Patient", "ResearchSubject", "Consent"] {
            router.get("/fhir/r4/\(type)/:id/_history", use: { request, context in try await history(type, request, context) })
            router.get("/fhir/r4/\(type)/:id/_history/:versionId", use: { request, context in try await version(type, request, context) })
        }
        for type in ["Patient", "ResearchSubject", "Questionnaire", "QuestionnaireResponse", "Observation", "Consent"] {
            router.get("/fhir/r4/\(type)", use: { request, context in try await search(type, request, context) })
        }
    }

    /// `GET [type]?...`: a `searchset` Bundle; its `next` link goes on after the page's last id, so
    /// it stays valid while rows are added.
    package func search(_ type: String, _ request: Request, _ context: ServiceRequestContext) async throws -> Response {
        let query = URI.formPairs(request.uri.query ?? "")
        guard query.count <= 32, (request.uri.query ?? "").utf8.count <= 4_096 else {
            return Self.outcome(.invalidSearch("the search is longer than this server takes (32 parameters, 4 KiB)"))
        }
        return try await answer {
            let page = try await reading.search(type: type, query: query, bearer: Self.bearer(request))
            let kept = query.filter { $0.name != "_cursor" }
            let base = "\(reading.naming.base)/\(type)"
            func link(_ pairs: [(name: String, value: String)]) -> String {
                pairs.isEmpty ? base : base + "?" + pairs.map { "\(Self.encoded($0.name))=\(Self.encoded($0.value))" }.joined(separator: "&")
            }
            return SearchBundle.make(
                total: page.total, selfURL: link(query), nextURL: page.nextAfter.map { link(kept + [("_cursor", String($0))]) },
                entries: page.entries)
        }
    }

    /// What a link's query keeps as it is, ASCII only (`CharacterSet.alphanumerics` would keep
    /// every script's letters unencoded); made once, since a character set is costly to build.
    private static let linkSafe = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/|*")

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: linkSafe) ?? text
    }

    @Sendable package func metadata(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        FHIRAuthRoutes.json(reading.capabilityStatement(tokenURL: tokenURL), status: .ok, contentType: Self.contentType)
    }

    @Sendable package func patient(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.patient(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    @Sendable package func researchSubject(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.researchSubject(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    @Sendable package func questionnaireResponse(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.questionnaireResponse(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    @Sendable package func questionnaire(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.questionnaire(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    @Sendable package func observation(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.observation(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    @Sendable package func consent(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer { try await reading.consent(id: try context.parameters.decoded("id"), bearer: Self.bearer(request)) }
    }

    /// `Binary/consent-{id}`: the signed PDF itself, or, for a client that accepts FHIR JSON (and
    /// not PDF), a `Binary` resource holding it, as FHIR's Binary read does.
    @Sendable package func binary(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await Self.answering {
            let id: String = try context.parameters.decoded("id")
            let document = try await reading.consentDocument(id: id, bearer: Self.bearer(request))
            let accept = (request.headers[.accept] ?? "").lowercased()
            if !accept.contains("application/pdf"), accept.contains("application/fhir+json") || accept.contains("application/json") {
                return FHIRAuthRoutes.json(
                    ConsentResources.binary(recordId: document.recordId, pdf: document.pdf), status: .ok, contentType: Self.contentType)
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/pdf"
            headers[.contentDisposition] = "attachment; filename=\"consent-\(document.recordId).pdf\""
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: document.pdf)))
        }
    }

    /// `{type}/{id}/_history` of a resource whose versions its own course tells (an enrollment
    /// withdrawn, a consent ended): every version, newest first.
    package func history(_ type: String, _ request: Request, _ context: ServiceRequestContext) async throws -> Response {
        try await answer {
            let id: String = try context.parameters.decoded("id")
            let versions = try await reading.history(type, id: id, bearer: Self.bearer(request))
            let fullUrl = "\(reading.naming.base)/\(type)/\(id)"
            return SearchBundle.history(of: versions, fullUrl: fullUrl, selfURL: fullUrl + "/_history")
        }
    }

    /// `{type}/{id}/_history/{n}`: one version of it.
    package func version(_ type: String, _ request: Request, _ context: ServiceRequestContext) async throws -> Response {
        try await answer {
            try await reading.version(
                type, id: try context.parameters.decoded("id"), versionId: try context.parameters.decoded("versionId"),
                bearer: Self.bearer(request))
        }
    }

    /// `Questionnaire/{id}/_history`: one version, as a questionnaire version never changes.
    @Sendable package func questionnaireHistory(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer {
            let id: String = try context.parameters.decoded("id")
            let resource = try await reading.questionnaire(id: id, bearer: Self.bearer(request))
            let fullUrl = "\(reading.naming.base)/Questionnaire/\(id)"
            return SearchBundle.history(of: [resource], fullUrl: fullUrl, selfURL: fullUrl + "/_history")
        }
    }

    /// `Questionnaire/{id}/_history/1`, the questionnaire's only version.
    @Sendable package func questionnaireVersion(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer {
            let id: String = try context.parameters.decoded("id")
            guard try context.parameters.decoded("versionId") as String == "1" else {
                throw FHIRRefusal.notFound("Questionnaire/\(id)/_history/\(try context.parameters.decoded("versionId") as String)")
            }
            return try await reading.questionnaire(id: id, bearer: Self.bearer(request))
        }
    }

    @Sendable package func researchStudy(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await answer {
            try await reading.researchStudy(id: try context.parameters.decoded("id"), bearer: Self.bearer(request))
        }
    }

    /// The token of an `Authorization: Bearer` header (the scheme in any case).
    static func bearer(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.utf8.count <= 512 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    private func answer(_ read: () async throws -> JSONValue) async throws -> Response {
        try await Self.answering { FHIRAuthRoutes.json(try await read(), status: .ok, contentType: Self.contentType) }
    }

    /// `respond`'s response, or its refusal as an `OperationOutcome`.
    static func answering(_ respond: () async throws -> Response) async throws -> Response {
        do {
            return try await respond()
        } catch let refusal as FHIRRefusal {
            return outcome(refusal)
        }
    }

    static let contentType = "application/fhir+json"

    /// A refusal as an `OperationOutcome`, with its status.
    static func outcome(_ refusal: FHIRRefusal) -> Response {
        let (status, code, message): (HTTPResponse.Status, OperationOutcome.Code, String) =
            switch refusal {
            case .unauthenticated(let why): (.unauthorized, .login, why)
            case .notInScope(let type): (.forbidden, .forbidden, "the token's scopes do not read \(type)")
            case .notFound(let reference): (.notFound, .notFound, "\(reference) is not known")
            case .invalidSearch(let why): (.badRequest, .notSupported, why)
            case .notSearchable(let type): (.notFound, .notSupported, "\(type) cannot be searched here")
            case .unavailable(let why): (.serviceUnavailable, .transient, why)
            case .invalid(let why): (.badRequest, .invalid, why)
            case .busy(let why): (.tooManyRequests, .throttled, why)
            case .deidentifiedClient(let type):
                (.forbidden, .forbidden, "this client receives participants' data de-identified, by Bulk Data export only: \(type) is not read directly")
            }
        var response = FHIRAuthRoutes.json(OperationOutcome.make(code, message), status: status, contentType: contentType)
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        if status == .serviceUnavailable || status == .tooManyRequests { response.headers[.retryAfter] = "5" }
        return response
    }
}
