import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import StudyModels

/// The response service's enrollment tokens, for the console's tokens page.
extension AdminAPIClient {
    package func tokenBatches(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [TokenBatch] {
        try await json(
            .GET, "/admin/v1/studies/\(Self.segment(studyId))/token-batches", on: .response, token: token, as: TokenBatchList.self,
            logger: logger
        ).batches
    }

    package func createTokenBatch(count: Int, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> TokenBatchCreated
    {
        try await json(
            .POST, "/admin/v1/studies/\(Self.segment(studyId))/token-batches", on: .response, token: token,
            body: Array(#"{"count": \#(count)}"#.utf8), as: TokenBatchCreated.self, logger: logger)
    }

    /// A download the console passes on as it arrives (a batch's CSV or its printable sheet can
    /// be larger than any reply the console reads whole).
    package struct Download: Sendable {
        package var contentType: String
        package var contentDisposition: String?
        package var body: HTTPClientResponse.Body
    }

    package func download(_ path: String, on peer: Peer, token: String, logger: Logger) async throws(AdminAPIError) -> Download {
        var url = baseURL(of: peer).absoluteString
        if url.hasSuffix("/") { url.removeLast() }
        var request = HTTPClientRequest(url: url + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let requestID = logger[metadataKey: "request_id"] { request.headers.add(name: "X-Request-Id", value: "\(requestID)") }
        let response: HTTPClientResponse
        do {
            // A 100,000-token sheet is thousands of pages: the deadline covers the whole transfer.
            response = try await http.client().execute(request, timeout: .minutes(10), logger: logger)
        } catch {
            logger.warning("admin API download failed", metadata: ["peer": "\(peer.rawValue)", "path": "\(path)", "error": "\(error)"])
            throw .unreachable(peer.rawValue, error)
        }
        guard response.status == .ok else {
            let reply = (try? await response.body.collect(upTo: 64 * 1024)) ?? ByteBuffer()
            throw Self.error(status: Int(response.status.code), reply: reply, peer: peer)
        }
        return Download(
            contentType: response.headers.first(name: "Content-Type") ?? "application/octet-stream",
            contentDisposition: response.headers.first(name: "Content-Disposition"), body: response.body)
    }
}
