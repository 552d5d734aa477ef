import FHIR
import Foundation
import HTTPTypes
import Hummingbird
import JSONText
import ResponseCore
import ServiceKitHTTP

/// The FHIR R4 API's reads (docs/fhir.md): `Authorization: Bearer` with a token from the SMART
/// token endpoint; resources as `application/fhir+json`, refusals as `OperationOutcome`s.
package struct FHIRReadRoutes {
    package let reading: FHIRReading

    package init(reading: FHIRReading) {
        self.reading = reading
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/fhir/r4/ResearchStudy/:id", use: researchStudy)
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
        do {
            return FHIRAuthRoutes.json(try await read(), status: .ok, contentType: Self.contentType)
        } catch let refusal as FHIRRefusal {
            return Self.outcome(refusal)
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
            }
        var response = FHIRAuthRoutes.json(OperationOutcome.make(code, message), status: status, contentType: contentType)
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}
