import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore
import NIOHTTP1
import StudyModels

/// Reads the responses a MyStudies 2.x response server kept in the Cloud Healthcare API's FHIR
/// store (its `enableFhirApi` holding `fhir` and `discardFhirAfterDid` false): each study's
/// `QuestionnaireResponse` resources in the store `FHIR_{studyId}` of the dataset named after the
/// study, through the FHIR REST API's search, a page (a `Bundle`) at a time, following the
/// bundle's `next` link; and the `Questionnaire` version each answers, looked up once each. GETs
/// only, with an OAuth access token (`gcloud auth print-access-token`). Each resource is handed on
/// as the fields of a stored response (`MyStudiesFHIRResponse`); one that cannot be read so is
/// handed on as it was read, for the import to list.
public struct MyStudiesFHIRStoreReader: Sendable {
    public typealias ReadError = GoogleAPIReadError

    /// The largest page read.
    public static let maxPageBytes = 64 * 1024 * 1024
    static let pageBudget = JSONValue.Budget(maxBytes: maxPageBytes, maxNodes: 8_000_000, maxDepth: 64)

    public let base: URL
    public let project: String
    public let location: String
    public let accessToken: String
    public let client: HTTPClient
    public let pageSize: Int

    /// `base` is the Healthcare API's REST root (`https://healthcare.googleapis.com`).
    public init(base: URL, project: String, location: String, accessToken: String, client: HTTPClient, pageSize: Int = 100) {
        self.base = base
        self.project = project
        self.location = location
        self.accessToken = accessToken
        self.client = client
        self.pageSize = pageSize
    }

    /// The FHIR base of a study's store, as path segments.
    public func store(of studyId: String) -> [String] {
        ["v1", "projects", project, "locations", location, "datasets", studyId, "fhirStores", "FHIR_" + studyId, "fhir"]
    }

    func url(_ segments: [String], query: [URLQueryItem] = []) throws -> URL {
        try GoogleAPIReading.url(base, segments, query: query)
    }

    /// Every stored response of `studyId`, handed to `body` in the order the store lists them;
    /// returns how many.
    @discardableResult
    public func read(studyId: String, _ body: (MyStudiesStoredResponse) throws -> Void) async throws -> Int {
        guard MyStudiesFirestoreReader.isStudyId(studyId) else { throw ReadError(description: "\(studyId) is not a study id (letters, digits, - and _)") }
        let store = store(of: studyId)
        let searchPath = try url(store + ["QuestionnaireResponse"])
        var next: URL? = try url(store + ["QuestionnaireResponse"], query: [.init(name: "_count", value: String(pageSize))])
        var versions: [String: String] = [:]
        var count = 0
        while let page = next {
            let bundle = try await get(page, what: "\(studyId)'s responses")
            for entry in bundle["entry"]?.array ?? [] {
                guard let resource = entry["resource"], let id = resource["id"]?.string else { throw ReadError(description: "a resource of \(studyId)'s store has no id") }
                let name = (store + ["QuestionnaireResponse", id]).dropFirst().joined(separator: "/")
                var version = ""
                if let questionnaire = MyStudiesFHIRResponse.questionnaire(resource) {
                    let key = questionnaire.id + "/" + questionnaire.versionId
                    if let known = versions[key] {
                        version = known
                    } else {
                        let answered = try await get(
                            try url(store + ["Questionnaire", questionnaire.id, "_history", questionnaire.versionId]), what: "questionnaire \(key)")
                        version = answered["version"]?.string ?? ""
                        versions[key] = version
                    }
                }
                let fields: JSONValue
                switch MyStudiesFHIRResponse.fields(resource, version: version) {
                case .success(let read): fields = read
                // Kept as read: the import lists what it cannot take.
                case .failure: fields = resource
                }
                try body(MyStudiesStoredResponse(studyId: studyId, document: name, createTime: resource["meta"]?["lastUpdated"]?.string, fields: fields))
                count += 1
            }
            next = try nextPage(bundle, searchPath: searchPath)
        }
        return count
    }

    /// The bundle's `next` link, taken only to the same search on the same server: a page cannot
    /// send the token elsewhere.
    func nextPage(_ bundle: JSONValue, searchPath: URL) throws -> URL? {
        guard let link = (bundle["link"]?.array ?? []).first(where: { $0["relation"]?.string == "next" })?["url"]?.string else { return nil }
        guard let url = URL(string: link), url.scheme == searchPath.scheme, url.host == searchPath.host, url.port == searchPath.port,
            url.path == searchPath.path
        else { throw ReadError(description: "a page's next link leaves the study's store: \(link)") }
        return url
    }

    private func get(_ url: URL, what: String) async throws -> JSONValue {
        try await GoogleAPIReading.json(
            url, accessToken: accessToken, client: client, accept: "application/fhir+json", maxBytes: Self.maxPageBytes, budget: Self.pageBudget,
            api: "the Healthcare API", what: what)
    }
}
