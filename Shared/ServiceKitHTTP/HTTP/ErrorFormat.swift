import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceKit

/// The three error formats of the architecture, one per API family.
public enum ErrorFormat: Sendable {
    /// `{"error": {"code", "message"}}`: admin API, internal API, operational endpoints.
    case admin
    /// HTTP status plus `status`, `title` and `StatusMessage` headers: the MyStudies WCP and
    /// registration APIs (the apps read the header, not the body).
    case statusMessage
    /// `{"success": false, "exception": ..., "errors": [...]}`: the LabKey-style response API.
    case labKey
    /// A page for people: the console draws its own (HTML, in its layout).
    case page(@Sendable (APIError) -> Response)
}

extension APIError {
    static let statusMessageHeader = HTTPField.Name("StatusMessage")!
    static let statusCodeHeader = HTTPField.Name("status")!
    static let titleHeader = HTTPField.Name("title")!

    /// The response for this error in `format`.
    public func response(format: ErrorFormat) -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body: Data
        switch format {
        case .admin:
            body = Self.encode(AdminErrorBody(code: code, message: message, problems: problems))
        case .labKey:
            if let problems, !problems.isEmpty {
                // Several failures of one request: each in `errors`, the first as `exception`.
                body = Self.encode(LabKeyErrorEnvelope(failures: problems.map { (field: $0.pointer, message: $0.message) }))
            } else {
                body = Self.encode(LabKeyErrorEnvelope(exception: message, field: field))
            }
        case .page(let render):
            return render(self)
        case .statusMessage:
            let code = statusMessageCode ?? Self.statusMessageCode(for: status)
            headers[Self.statusCodeHeader] = String(code.rawValue)
            headers[Self.titleHeader] = code.title
            headers[Self.statusMessageHeader] = Self.headerSafe(message)
            body = Self.encode(StatusMessageErrorBody(code: code, message: message))
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The originals' mapping: 401 → 101, 403/404 → 103 (no data), other 4xx → 102, 5xx → 104.
    static func statusMessageCode(for status: HTTPResponse.Status) -> StatusMessageCode {
        switch status.code {
        case 401: .invalidAuthorization
        case 403, 404: .noData
        case 400..<500: .invalidInput
        default: .unknown
        }
    }

    /// Header values cannot hold line breaks or other control characters.
    static func headerSafe(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }

    private static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
}
