import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore
import NIOHTTP1

/// Why reading from a Google Cloud API (Firestore, the Healthcare API) stopped.
public struct GoogleAPIReadError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// One GET of a Google Cloud REST API, as the move-in's readers send them: the bearer token, the
/// body read within `maxBytes` and parsed within `budget`; anything but 200 an error that quotes
/// what the API said (an expired token, a missing permission).
enum GoogleAPIReading {
    /// What a path segment keeps as it is: the unreserved characters and the parentheses of
    /// Firestore's `(default)`.
    static let segmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~()")

    /// `base` with the path of `segments`, each percent-encoded (none can add a segment), and `query`.
    static func url(_ base: URL, _ segments: [String], query: [URLQueryItem] = []) throws -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        components?.percentEncodedPath = "/" + segments.map { $0.addingPercentEncoding(withAllowedCharacters: segmentCharacters) ?? $0 }.joined(separator: "/")
        components?.queryItems = query.isEmpty ? nil : query
        guard let url = components?.url else { throw GoogleAPIReadError(description: "no address can be made for \(segments.joined(separator: "/"))") }
        return url
    }

    static func json(
        _ url: URL, accessToken: String, client: HTTPClient, accept: String, maxBytes: Int, budget: JSONValue.Budget, api: String, what: String
    ) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "Accept", value: accept)
        let response = try await client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: maxBytes)
        guard response.status == .ok else {
            let said = String(decoding: body.readableBytesView.prefix(500), as: UTF8.self)
            throw GoogleAPIReadError(description: "\(api) answered \(response.status.code) for \(what): \(said)")
        }
        do {
            return try JSONValue.parse(body.readableBytesView, budget: budget)
        } catch {
            throw GoogleAPIReadError(description: "a page of \(what) is not JSON: \(error)")
        }
    }
}
