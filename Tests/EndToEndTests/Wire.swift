import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StudyModels

/// HTTP as a client on the network sends it: exactly the headers and body given, nothing added.
enum Wire {
    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as JSON (nil when it is not JSON).
        var json: JSONValue? { try? JSONValue.parse(Array(body), budget: .studyDocument) }
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Sends one request. `json` is serialised pretty-printed, as the iOS app does, with
    /// `Content-Type: application/json`; `raw` is sent as it is, with the headers given only.
    /// The shared client follows redirects; pass one that does not to see a 303 and its cookies.
    static func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], json: Any? = nil, raw: Data? = nil,
        client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30), limit: Int = 16 << 20
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted])
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: data))
        } else if let raw {
            request.body = .bytes(ByteBuffer(bytes: raw))
        }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: limit)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
    }

    /// `name=value&...`, each value percent-encoded as Foundation's "URL query allowed" set does it
    /// (`&`, `=`, `+`, `,`, `/`, `?` inside values stay as they are, as in the iOS app).
    static func query(_ items: [(String, String)]) -> String {
        items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0.1)" }
            .joined(separator: "&")
    }
}

