import Foundation
import Hummingbird
import HummingbirdCore
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The parameters of a researcher's LabKey call, wherever the client put them: the query string
/// (GET), a form body (the `labkey` Python client posts `application/x-www-form-urlencoded`), or a
/// JSON object body (LabKey's JavaScript client and Rlabkey). A name may come more than once: the
/// Python client repeats a filter's name for each of its values, and a JSON array does the same.
/// Body members come after the query string's, so `first` prefers the query string.
package struct LabKeyResearcherRequest: Sendable {
    package var values: [String: [String]] = [:]

    /// The largest body read: the calls carry a few filters or one SQL text (`QueryRoutes.maxSQLBytes`).
    package static let maxBodyBytes = 256 * 1024

    package func first(_ name: String) -> String? {
        values[name]?.first
    }

    package static func read(_ request: Request) async throws -> LabKeyResearcherRequest {
        var parameters = LabKeyResearcherRequest()
        if let query = request.uri.query { parameters.add(URI.formPairs(query)) }
        let body = try await request.body.collect(upTo: maxBodyBytes)
        guard body.readableBytes > 0 else { return parameters }
        let bytes = Array(body.readableBytesView)
        let isJSON =
            request.headers[.contentType]?.lowercased().contains("json") == true
            || bytes.first { !$0.isWhitespace } == UInt8(ascii: "{")
        if isJSON {
            guard case .object(let members)? = try? JSONValue.parse(bytes, budget: .requestParameters(maxBytes: maxBodyBytes)) else {
                throw APIError(.badRequest, code: "invalid_request", message: "The request body is not a JSON object.")
            }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                switch value {
                case .array(let items): parameters.add(items.map { (name, $0.text ?? $0.serialized(sortedKeys: true)) })
                case .null: continue
                default: parameters.add([(name, value.text ?? value.serialized(sortedKeys: true))])
                }
            }
        } else {
            parameters.add(URI.formPairs(String(decoding: bytes, as: UTF8.self)))
        }
        return parameters
    }

    private mutating func add(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs { values[name, default: []].append(value) }
    }

    /// The prefix LabKey's clients put before SQL they encoded so that a web application firewall
    /// between them and the server does not take the query for an attack: the rest is base64 of
    /// the percent-encoded text (`encodeURIComponent`).
    package static let wafPrefix = "/*{{base64/x-www-form-urlencoded/wafText}}*/"

    /// SQL as the client wrote it: WAF-encoded text decoded, anything else as it came. Nil when
    /// the text carries the prefix but is not what the clients encode.
    package static func decodedSQL(_ text: String) -> String? {
        guard text.hasPrefix(wafPrefix) else { return text }
        let encoded = text.dropFirst(wafPrefix.count).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: encoded), let percentEncoded = String(data: data, encoding: .utf8) else {
            return nil
        }
        return percentEncoded.removingPercentEncoding
    }
}

extension UInt8 {
    fileprivate var isWhitespace: Bool {
        self == UInt8(ascii: " ") || self == UInt8(ascii: "\n") || self == UInt8(ascii: "\r") || self == UInt8(ascii: "\t")
    }
}
