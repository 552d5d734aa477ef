import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Synchronization
import Testing
import TestSupport

/// The console as a browser reaches it over the network: it keeps the cookies the console sets,
/// sends forms urlencoded, and does not follow redirects (the sign-in's 303 carries the session).
final class WireBrowser: Sendable {
    let base: String
    private let client: HTTPClient
    private let cookies = Mutex<[String: String]>([:])

    init(base: String, client: HTTPClient = WireBrowser.noRedirects) {
        self.base = base
        self.client = client
    }

    /// One client for every browser: redirects are the browser's to follow.
    static let noRedirects = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// `path` with the browser's cookies; `form` is sent urlencoded.
    func send(_ method: HTTPMethod, _ path: String, form: [(String, String)]? = nil) async throws -> Wire.Reply {
        var headers: [(String, String)] = []
        let jar = cookies.withLock { $0 }
        if !jar.isEmpty { headers.append(("Cookie", jar.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "))) }
        var body: Data?
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._*"))
            body = Data(form.map { name, value in
                (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") + "="
                    + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
            }.joined(separator: "&").utf8)
        }
        let reply = try await Wire.send(method, base + path, headers: headers, raw: body, client: client)
        cookies.withLock { jar in
            for line in reply.headers["Set-Cookie"] {
                let pair = (line.split(separator: ";").first ?? "").split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = pair.first.map(String.init) else { continue }
                let value = pair.count > 1 ? String(pair[1]) : ""
                jar[name] = line.contains("Max-Age=0") || value.isEmpty ? nil : value
            }
        }
        return reply
    }

    /// Signs in through the form, as the admin would.
    func signIn(_ email: String, _ password: String) async throws {
        let form = try await send(.GET, "/signin")
        let csrf = try #require(Self.input("csrf", in: form.text), "no form token on the sign-in page")
        let signedIn = try await send(.POST, "/signin", form: [("csrf", csrf), ("next", "/"), ("email", email), ("password", password)])
        #expect(signedIn.status == 303, "\(signedIn.text.prefix(2000))")
    }

    /// The value of the first `<input name="name" value="...">` of a page, as written.
    static func input(_ name: String, in html: String) -> String? {
        let pattern = "name=\"\(NSRegularExpression.escapedPattern(for: name))\" value=\"([^\"]*)\""
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)),
            let range = Range(match.range(at: 1), in: html)
        else { return nil }
        return String(html[range])
    }
}
