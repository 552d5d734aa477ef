import Foundation
import NIOHTTP1
import StudyModels
import Synchronization

/// The MyStudies app's networking, iOS (2020 build) or Android:
/// base URL plus method name, the two encodings, each server's default headers, and the
/// registration server's 401 → `refreshToken` → replay, with each platform's quirks.
final class MyStudiesApp: Sendable {
    enum Kind: Sendable { case ios, android }

    struct Session: Sendable {
        var auth: String?
        var refreshToken: String?
        var userId: String?
        /// Every call as the servers saw it: `server name status`, in order.
        var trace: [String] = []
    }

    let kind: Kind
    let credential: String
    let wcpBase: String
    let registrationBase: String
    let responseBase: String
    let appId = "DEMOAPP"
    let orgId = "DEMOORG"
    private let state = Mutex(Session())

    init(kind: Kind, credential: String, wcpBase: String, registrationBase: String, responseBase: String) {
        self.kind = kind
        self.credential = credential
        self.wcpBase = wcpBase
        self.registrationBase = registrationBase
        self.responseBase = responseBase
    }

    var session: Session { state.withLock { $0 } }

    func signedIn(_ reply: Wire.Reply) {
        state.withLock {
            $0.auth = reply.json?["auth"]?.string
            $0.refreshToken = reply.json?["refreshToken"]?.string
            $0.userId = reply.json?["userId"]?.string
        }
    }

    func signedOut() { state.withLock { $0 = Session(trace: $0.trace) } }

    private func record(_ server: String, _ name: String, _ reply: Wire.Reply) {
        state.withLock { $0.trace.append("\(server) \(name) \(reply.status)") }
    }

    private var platformHeaders: [(String, String)] { [("applicationId", appId), ("orgId", orgId)] }

    // MARK: WCP (study-metadata): GET, query string, Basic credential

    func wcp(_ name: String, _ query: [(String, String)] = []) async throws -> Wire.Reply {
        // Android encodes with Base64.DEFAULT, which ends the text with a line feed; no HTTP
        // client puts a line feed into a header, so what arrives is the value without it (the
        // credential is short enough that Base64.DEFAULT breaks no line inside it).
        let encoded = Data(credential.utf8).base64EncodedString()
        let url = wcpBase + name + (query.isEmpty ? "" : "?" + Wire.query(query))
        let reply = try await Wire.send(.GET, url, headers: [("Authorization", "Basic \(encoded)")] + platformHeaders)
        record("W", name, reply)
        return reply
    }

    // MARK: Registration: JSON POST/DELETE or GET, applicationId/orgId, auth when held

    /// `explicitAuth`: the calls that pass `auth` per call (updateEligibilityConsentStatus,
    /// deactivate) replay with that stale key after a refresh, as the iOS app does.
    func registration(
        _ name: String, method: HTTPMethod = .POST, body: [String: Any]? = nil, query: [(String, String)] = [],
        userId sendsUserId: Bool = true, explicitAuth: Bool = false
    ) async throws -> Wire.Reply {
        let held = session
        let reply = try await registrationCall(
            name, method: method, body: body, query: query, auth: held.auth, userId: sendsUserId ? held.userId : nil)
        guard reply.status == 401 else { return reply }
        // §1.5 (iOS) and §7 (Android): no refresh token and not login → local "session expired".
        guard held.refreshToken != nil || name == "login" else { return reply }
        let refreshBody = ["refreshToken": held.refreshToken ?? ""]
        let refreshed = try await registrationCall(
            "refreshToken", method: .POST, body: refreshBody, query: [], auth: held.auth, userId: nil)
        guard refreshed.status == 200, let newAuth = refreshed.json?["auth"]?.string else { return refreshed }
        switch kind {
        case .ios:
            // Only the new auth is kept; the replay re-sends the most recent body (the refresh
            // body), as the query string of a GET, and the per-call auth of the calls that set it.
            state.withLock { $0.auth = newAuth }
            let replayQuery = method == .GET ? query + [("refreshToken", held.refreshToken ?? "")] : query
            return try await registrationCall(
                name, method: method, body: method == .GET ? nil : refreshBody, query: replayQuery,
                auth: explicitAuth ? held.auth : newAuth, userId: sendsUserId ? held.userId : nil)
        case .android:
            // Both are kept, and the original request is replayed.
            state.withLock {
                $0.auth = newAuth
                $0.refreshToken = refreshed.json?["refreshToken"]?.string ?? $0.refreshToken
            }
            return try await registrationCall(
                name, method: method, body: body, query: query, auth: newAuth, userId: sendsUserId ? held.userId : nil)
        }
    }

    private func registrationCall(
        _ name: String, method: HTTPMethod, body: [String: Any]?, query: [(String, String)], auth: String?, userId: String?
    ) async throws -> Wire.Reply {
        var headers = platformHeaders
        if let auth { headers.append(("auth", auth)) }
        if let userId { headers.append(("userId", userId)) }
        let url = registrationBase + name + ".api" + (query.isEmpty ? "" : "?" + Wire.query(query))
        // The body only when there is one (GET never has one).
        let json: Any? = method == .GET || (body?.isEmpty ?? true) ? nil : body
        let reply = try await Wire.send(method, url, headers: headers, json: json)
        record("U", name, reply)
        return reply
    }

    // MARK: Response: query-string POSTs with an empty body (iOS), JSON bodies (Android)

    /// A LabKey action. iOS sends no headers at all and the parameters in the query string of a
    /// POST with an empty body and no content type; Android sends `applicationId`/`orgId` and, for
    /// `enroll` and `validateEnrollmentToken`, a JSON body.
    func response(
        _ action: String, method: HTTPMethod = .POST, _ parameters: [(String, String)] = [], jsonBody: Bool = false
    ) async throws -> Wire.Reply {
        let headers = kind == .android ? platformHeaders : []
        let reply: Wire.Reply
        if jsonBody {
            reply = try await Wire.send(
                method, responseBase + action + ".api", headers: headers,
                json: Dictionary(parameters, uniquingKeysWith: { $1 }))
        } else {
            let url = responseBase + action + ".api" + (parameters.isEmpty ? "" : "?" + Wire.query(parameters))
            reply = try await Wire.send(method, url, headers: headers)
        }
        record("R", action, reply)
        return reply
    }

    /// `processResponse`: a JSON body on both platforms.
    func processResponse(_ body: [String: Any]) async throws -> Wire.Reply {
        let reply = try await Wire.send(
            .POST, responseBase + "processResponse.api", headers: kind == .android ? platformHeaders : [], json: body)
        record("R", "processResponse", reply)
        return reply
    }

    /// The anchor-date and dashboard queries: a bare URLSession GET, no headers at all (iOS).
    func executeSQL(participantId: String, _ sql: String) async throws -> Wire.Reply {
        try await response("executeSQL", method: .GET, [("participantId", participantId), ("sql", sql)])
    }
}
