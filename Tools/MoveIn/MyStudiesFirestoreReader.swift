import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore
import NIOHTTP1
import StudyModels

/// Reads the responses a MyStudies 2.x deployment's response server stored in Cloud Firestore
/// (its only storage in that release): each study's documents under
/// `{studyId}-RESPONSES/{studyId}/Activities`, through Firestore's REST API (`documents.list`),
/// a page at a time, with an OAuth access token (`gcloud auth print-access-token`). GETs only.
/// Each document is handed on as it is read, so a study of any size is never held whole.
public struct MyStudiesFirestoreReader: Sendable {
    public typealias ReadError = GoogleAPIReadError

    /// The largest page read (Firestore documents are at most 1 MiB; a page holds `pageSize`).
    public static let maxPageBytes = 64 * 1024 * 1024
    /// Budget for one page's JSON.
    static let pageBudget = JSONValue.Budget(maxBytes: maxPageBytes, maxNodes: 8_000_000, maxDepth: 64)

    public let base: URL
    public let project: String
    public let database: String
    public let accessToken: String
    public let client: HTTPClient
    public let pageSize: Int

    /// `base` is Firestore's REST root (`https://firestore.googleapis.com`).
    public init(base: URL, project: String, database: String = "(default)", accessToken: String, client: HTTPClient, pageSize: Int = 300) {
        self.base = base
        self.project = project
        self.database = database
        self.accessToken = accessToken
        self.client = client
        self.pageSize = pageSize
    }

    static func isStudyId(_ text: String) -> Bool {
        (1...100).contains(text.unicodeScalars.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }

    /// The collection MyStudies' response server keeps a study's responses in.
    public static func collection(of studyId: String) -> String {
        "\(studyId)-RESPONSES/\(studyId)/Activities"
    }

    /// Every stored response of `studyId`, handed to `body` in the order Firestore lists them;
    /// returns how many.
    @discardableResult
    public func read(studyId: String, _ body: (MyStudiesStoredResponse) throws -> Void) async throws -> Int {
        var pageToken: String?
        var count = 0
        repeat {
            let page = try await page(studyId: studyId, token: pageToken)
            for document in page["documents"]?.array ?? [] {
                guard let name = document["name"]?.string else { throw ReadError(description: "a document of \(studyId) has no name") }
                let fields: JSONValue
                do {
                    fields = try FirestoreValues.plain(fields: document["fields"])
                } catch {
                    throw ReadError(description: "\(name): \(error)")
                }
                try body(MyStudiesStoredResponse(studyId: studyId, document: name, createTime: document["createTime"]?.string, fields: fields))
                count += 1
            }
            pageToken = page["nextPageToken"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        } while pageToken != nil
        return count
    }

    private func page(studyId: String, token: String?) async throws -> JSONValue {
        // A study id names path segments: only the letters, digits, `-` and `_` study ids are made
        // of, so none can add a segment, climb out of the collection or start a query.
        guard Self.isStudyId(studyId) else { throw ReadError(description: "\(studyId) is not a study id (letters, digits, - and _)") }
        let segments = ["v1", "projects", project, "databases", database, "documents", "\(studyId)-RESPONSES", studyId, "Activities"]
        let url = try GoogleAPIReading.url(
            base, segments, query: [.init(name: "pageSize", value: String(pageSize))] + (token.map { [.init(name: "pageToken", value: $0)] } ?? []))
        return try await GoogleAPIReading.json(
            url, accessToken: accessToken, client: client, accept: "application/json", maxBytes: Self.maxPageBytes, budget: Self.pageBudget,
            api: "Firestore", what: "\(studyId)'s responses")
    }
}
