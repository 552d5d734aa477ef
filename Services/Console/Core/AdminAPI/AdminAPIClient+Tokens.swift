import AdminContracts
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceKit
import StudyModels

/// The response service's enrollment tokens, for the console's tokens page.
extension AdminAPIClient {
    package func tokenBatches(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [TokenBatch] {
        try await call(AdminCalls.tokenBatches, ["studyId": studyId], token: token, logger: logger).batches
    }

    package func createTokenBatch(count: Int, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> TokenBatchCreated
    {
        try await call(
            AdminCalls.createTokenBatch, ["studyId": studyId], body: TokenBatchRequest(count: count), token: token, logger: logger)
    }

    /// A download the console passes on as it arrives (a batch's CSV or its printable sheet can
    /// be larger than any reply the console reads whole).
    package struct Download: Sendable {
        package var contentType: String
        package var contentDisposition: String?
        package var body: HTTPClientResponse.Body
    }

    /// An admin endpoint whose reply is a file (an export, a token sheet, a consent PDF, an archive).
    package func download(
        _ endpoint: AdminEndpoint<NoContent, OpaqueBody>, _ parameters: [String: String], query: [(String, String)] = [], token: String,
        logger: Logger
    ) async throws(AdminAPIError) -> Download {
        try await download(path: try Self.path(endpoint, parameters, query: query), on: endpoint.service, token: token, logger: logger)
    }

    /// `path` at `service`, passed on as it arrives.
    package func download(path: String, on service: ServiceName, token: String, logger: Logger) async throws(AdminAPIError) -> Download {
        var url = baseURL(of: service).absoluteString
        if url.hasSuffix("/") { url.removeLast() }
        var request = HTTPClientRequest(url: url + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let requestID = logger[metadataKey: "request_id"] { request.headers.add(name: "X-Request-Id", value: "\(requestID)") }
        let response: HTTPClientResponse
        do {
            // A 100,000-token sheet is thousands of pages: the deadline covers the whole transfer.
            response = try await http.client().execute(request, timeout: .minutes(10), logger: logger)
        } catch {
            logger.warning("admin API download failed", metadata: ["peer": "\(service.rawValue)", "path": "\(path)", "error": "\(error)"])
            throw .unreachable(service.rawValue, error)
        }
        guard response.status == .ok else {
            let reply = (try? await response.body.collect(upTo: 64 * 1024)) ?? ByteBuffer()
            throw Self.error(status: Int(response.status.code), reply: reply, peer: service)
        }
        return Download(
            contentType: response.headers.first(name: "Content-Type") ?? "application/octet-stream",
            contentDisposition: response.headers.first(name: "Content-Disposition"), body: response.body)
    }
}
