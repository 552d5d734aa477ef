import FHIR
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JSONText
import ResponseCore
import ServiceKitHTTP

/// The FHIR API's Bulk Data exports (docs/fhir.md, Bulk Data; the Bulk Data Access IG v2): the
/// kick-offs, the status URL (polled, then the manifest; `DELETE` cancels) and the NDJSON files,
/// each streamed a chunk at a time.
package struct FHIRExportRoutes {
    package let exporting: FHIRExporting

    package init(exporting: FHIRExporting) {
        self.exporting = exporting
    }

    /// How long a client should wait between status requests.
    static let retryAfterSeconds = 2

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/fhir/r4/Group/:id/$export") { request, context in
            try await kickOff(.group(try context.parameters.decoded("id")), request)
        }
        router.get("/fhir/r4/Patient/$export") { request, _ in try await kickOff(.patient, request) }
        router.get("/fhir/r4/bulk-status/:id", use: status)
        router.delete("/fhir/r4/bulk-status/:id", use: cancel)
        router.get("/fhir/r4/bulk-files/:id/:file", use: file)
    }

    func kickOff(_ level: FHIRExporting.Level, _ request: Request) async throws -> Response {
        let query = URI.formPairs(request.uri.query ?? "")
        guard query.count <= 8, (request.uri.query ?? "").utf8.count <= 2_048 else {
            return FHIRReadRoutes.outcome(.invalid("the kick-off is longer than this server takes (8 parameters, 2 KiB)"))
        }
        let prefer = request.headers[values: .init("Prefer")!].flatMap { $0.split(separator: ",") }
        let respondAsync = prefer.contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "respond-async" }
        let path = request.uri.path.hasPrefix("/fhir/r4") ? String(request.uri.path.dropFirst("/fhir/r4".count)) : request.uri.path
        let requestURL = exporting.reading.naming.base + path + (request.uri.query.map { "?" + $0 } ?? "")
        return try await FHIRReadRoutes.answering {
            let statusURL = try await exporting.kickOff(
                level: level, query: query, respondAsync: respondAsync, requestURL: requestURL, bearer: FHIRReadRoutes.bearer(request))
            var response = Response(status: .accepted)
            response.headers[.contentLocation] = statusURL
            return response
        }
    }

    @Sendable func status(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await FHIRReadRoutes.answering {
            switch try await exporting.status(id: try context.parameters.decoded("id"), bearer: FHIRReadRoutes.bearer(request)) {
            case .inProgress(let progress):
                var response = Response(status: .accepted)
                response.headers[.init("X-Progress")!] = progress
                response.headers[.retryAfter] = String(Self.retryAfterSeconds)
                return response
            case .complete(let manifest, let expiresAt):
                var response = FHIRAuthRoutes.json(manifest, status: .ok, contentType: "application/json")
                response.headers[.expires] = Self.httpDate(expiresAt)
                return response
            case .failed(let why):
                return FHIRAuthRoutes.json(
                    OperationOutcome.make(.exception, "the export failed: \(why)"), status: .internalServerError, contentType: FHIRReadRoutes.contentType)
            }
        }
    }

    @Sendable func cancel(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await FHIRReadRoutes.answering {
            try await exporting.cancel(id: try context.parameters.decoded("id"), bearer: FHIRReadRoutes.bearer(request))
            return Response(status: .accepted)
        }
    }

    @Sendable func file(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await FHIRReadRoutes.answering {
            let (file, chunk) = try await exporting.file(
                id: try context.parameters.decoded("id"), number: try context.parameters.decoded("file"), bearer: FHIRReadRoutes.bearer(request))
            return Response(
                status: .ok,
                headers: [.contentType: "application/fhir+ndjson", .contentLength: String(file.bytes), .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    var number = 1
                    while let data = try await chunk(number) {
                        try await writer.write(data)
                        number += 1
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// An HTTP date (RFC 9110), as `Expires` takes it.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
