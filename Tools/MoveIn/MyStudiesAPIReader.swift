import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore
import NIOHTTP1
import StudyModels

/// Reads every study of one app from a MyStudies deployment's study-metadata API, the way its
/// apps read it: the app's Basic credential (`bundleId:appToken`) with `applicationId` and
/// `orgId` headers, GETs only, one at a time. The source is never written to.
///
/// Each activity is asked for at its current version and at the earlier versions its
/// numbering implies (`2.3` → `1.0` ... `1.9`, `2.0` ... `2.2`; `3` → `1`, `2`), and at any
/// version named in `extraVersions` (those participants' records name); what the deployment
/// still serves is kept, with what it answered for an asked-for version it did not serve.
public struct MyStudiesAPIReader: Sendable {
    public struct Credentials: Sendable {
        public var bundleId: String
        public var appToken: String
        /// The app's id at the source (`applicationId`).
        public var appId: String
        public var orgId: String

        public init(bundleId: String, appToken: String, appId: String, orgId: String) {
            self.bundleId = bundleId
            self.appToken = appToken
            self.appId = appId
            self.orgId = orgId
        }

        /// `bundleId:appToken`, as the apps are built with it.
        public init?(credential: String, appId: String, orgId: String) {
            let parts = credential.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            self.init(bundleId: String(parts[0]), appToken: String(parts[1]), appId: appId, orgId: orgId)
        }
    }

    /// What went wrong reading the source, said for the person running the import.
    public struct ReadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The largest reply read: the largest activity design a deployment could serve, with room.
    public static let maxReplyBytes = 16 * 1024 * 1024
    /// The most earlier versions asked for per activity (the newest first).
    public static let maxEarlierVersions = 100

    public let base: URL
    public let credentials: Credentials
    public let client: HTTPClient
    public let timeout: TimeAmount

    /// `base` is the study-metadata root the apps are configured with (`.../StudyMetaData`).
    public init(base: URL, credentials: Credentials, client: HTTPClient, timeout: TimeAmount = .seconds(60)) {
        self.base = base
        self.credentials = credentials
        self.client = client
        self.timeout = timeout
    }

    /// Every study `studyList` lists (only `studyIds` when given), with all its replies.
    public func read(studyIds: [String]? = nil, extraVersions: [String: [String]] = [:], now: Date = Date()) async throws
        -> MyStudiesStudyExport
    {
        let list = try await get("studyList")
        guard case .ok = list.status, let studies = list.json?["studies"]?.array else {
            throw ReadError(description: "studyList answered \(list.status.code)\(list.message.map { ": \($0)" } ?? ""); check the address and the app's credential")
        }
        var read: [MyStudiesStudyExport.Study] = []
        for listing in studies {
            guard let studyId = listing["studyId"]?.string, !studyId.isEmpty else { continue }
            if let studyIds, !studyIds.contains(where: { $0.unicodeScalars.elementsEqual(studyId.unicodeScalars) }) { continue }
            read.append(try await study(listing, studyId: studyId, extraVersions: extraVersions[studyId] ?? []))
        }
        if let studyIds {
            let missing = studyIds.filter { wanted in !read.contains { $0.studyId.unicodeScalars.elementsEqual(wanted.unicodeScalars) } }
            if !missing.isEmpty { throw ReadError(description: "studyList does not list \(missing.joined(separator: ", "))") }
        }
        return MyStudiesStudyExport(source: base.absoluteString, readAt: ISO8601DateFormatter().string(from: now), studies: read)
    }

    private func study(_ listing: JSONValue, studyId: String, extraVersions: [String]) async throws -> MyStudiesStudyExport.Study {
        let query = [("studyId", studyId)]
        var study = MyStudiesStudyExport.Study(listing: listing)
        study.studyInfo = try await success("studyInfo", query)
        study.eligibilityConsent = try await success("eligibilityConsent", query)
        study.consentDocument = try await success("consentDocument", query + [("consentVersion", "")])
        study.activityList = try await success("activityList", query)
        study.resources = try await success("resources", query)
        study.dashboard = try await success("studyDashboard", query)
        study.participantProperties = try await success("participantProperties", query)

        for item in study.activityList?["activities"]?.array ?? [] {
            guard let activityId = item["activityId"]?.string, !activityId.isEmpty else { continue }
            let current = item["activityVersion"]?.text ?? "1.0"
            let asked = Self.earlierLabels(of: current) + extraVersions + [current]
            var seen: Set<String> = []
            for label in asked where seen.insert(label).inserted {
                let reply = try await get(
                    "activity", [("studyId", studyId), ("activityId", activityId), ("activityVersion", label)])
                let served = reply.status == .ok && reply.json?["activity"] != nil
                if served {
                    study.activities.append(.init(activityId: activityId, version: label, reply: reply.json))
                } else if reply.status == .ok, reply.json == nil {
                    study.activities.append(.init(
                        activityId: activityId, version: label, reply: nil, refusal: "HTTP 200 whose body is not JSON"))
                } else if label == current || extraVersions.contains(label) {
                    // Asked for because it is current or named by participants' records: say what came back.
                    study.activities.append(.init(
                        activityId: activityId, version: label, reply: nil,
                        refusal: "HTTP \(reply.status.code)\(reply.message.map { " \($0)" } ?? "")"))
                }
            }
        }
        return study
    }

    /// The labels before `current` in the numbering the original servers used, newest last.
    static func earlierLabels(of current: String) -> [String] {
        let parts = current.split(separator: ".", omittingEmptySubsequences: false)
        var labels: [String] = []
        if parts.count == 2, let major = WholeNumber.parse(parts[0], in: 1...1_000), let minor = WholeNumber.parse(parts[1], in: 0...1_000_000) {
            // Newest first, at most `maxEarlierVersions`: the minors before this one, then .9 to .0
            // of each major before it.
            var (m, n) = (major, minor - 1)
            while labels.count < maxEarlierVersions, m >= 1 {
                if n >= 0 {
                    labels.append("\(m).\(n)")
                    n -= 1
                } else {
                    (m, n) = (m - 1, 9)
                }
            }
            labels.reverse()
        } else if parts.count == 1, let number = WholeNumber.parse(parts[0], in: 1...1_000_000), number > 1 {
            labels = (max(1, number - maxEarlierVersions)..<number).map(String.init)
        }
        return labels
    }

    // MARK: - HTTP

    struct Reply {
        var status: HTTPResponseStatus
        var json: JSONValue?
        /// The `StatusMessage` header the originals put their errors in.
        var message: String?
    }

    /// The reply's JSON when it is a success, nil otherwise (a deployment that does not serve it).
    private func success(_ name: String, _ query: [(String, String)]) async throws -> JSONValue? {
        let reply = try await get(name, query)
        return reply.status == .ok ? reply.json : nil
    }

    func get(_ name: String, _ query: [(String, String)] = []) async throws -> Reply {
        var components = URLComponents(url: base.appendingPathComponent(name), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let url = components?.url else { throw ReadError(description: "\(base) is not an address") }
        var request = HTTPClientRequest(url: url.absoluteString)
        let credential = Data("\(credentials.bundleId):\(credentials.appToken)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credential)")
        request.headers.add(name: "applicationId", value: credentials.appId)
        request.headers.add(name: "appId", value: credentials.appId)
        request.headers.add(name: "orgId", value: credentials.orgId)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: timeout)
        } catch {
            throw ReadError(description: "\(url.absoluteString) could not be read: \(error)")
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: Self.maxReplyBytes)
        } catch {
            throw ReadError(description: "\(name) sent more than \(Self.maxReplyBytes) bytes; not read")
        }
        let json = try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView))
        return Reply(status: response.status, json: json, message: response.headers.first(name: "StatusMessage"))
    }
}
