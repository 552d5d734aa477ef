import Foundation
import ServiceKit
import StudyModels

/// Where a study's processed responses are forwarded (docs/response-api.md, Forwarding): nowhere,
/// to a URL with HTTP Basic credentials, or to a URL with a bearer token first obtained from a
/// token endpoint.
package enum ForwardingTarget: Sendable, Equatable {
    case disabled
    case basic(url: URL, username: String, password: String)
    case oauth(tokenRequestURL: URL, tokenField: String, header: String, url: URL)

    package var kind: String {
        switch self {
        case .disabled: "disabled"
        case .basic: "basic"
        case .oauth: "oauth"
        }
    }

    /// Where responses are sent (a FHIR server's base, for FHIR transactions).
    package var url: URL? {
        switch self {
        case .disabled: nil
        case .basic(let url, _, _), .oauth(_, _, _, let url): url
        }
    }

    /// What the admin API shows for a stored password: never the password.
    package static let redacted = "***REDACTED***"

    /// The settings an admin sends (`PUT /admin/v1/studies/{id}/forwarding`).
    package struct Request: Decodable, Sendable {
        package var type: String
        package var url: String?
        package var username: String?
        package var password: String?
        package var tokenRequestURL: String?
        package var tokenField: String?
        package var header: String?
        /// `JSON` (the original's body; the default) or `FHIR`.
        package var format: String?
    }

    /// A field the admin must correct, with the original's words where it had them.
    package struct Problem: Equatable, Sendable {
        package var field: String
        package var message: String
    }

    /// Every field to correct.
    package struct Invalid: Error, Equatable, Sendable {
        package var problems: [Problem]
    }

    /// The target a request describes and what is sent to it, with every problem of both.
    package static func parseSettings(
        _ request: Request, stored: ForwardingTarget?, addresses: OutboundAddressPolicy
    ) throws(Invalid) -> (target: ForwardingTarget, format: ForwardingFormat) {
        var problems: [Problem] = []
        let format = ForwardingFormat(rawValue: (request.format ?? "json").lowercased())
        if format == nil { problems.append(Problem(field: "format", message: "format must be JSON or FHIR")) }
        var target: ForwardingTarget?
        do {
            target = try parse(request, stored: stored, addresses: addresses)
        } catch {
            problems += error.problems
        }
        guard problems.isEmpty, let target, let format else { throw Invalid(problems: problems) }
        return (target, format)
    }

    /// The target a request describes. A blank or redacted Basic password keeps the stored one
    /// only while the URL and username stay the same: otherwise an admin could point the stored
    /// credentials at a listener of their own.
    package static func parse(
        _ request: Request, stored: ForwardingTarget?, addresses: OutboundAddressPolicy
    ) throws(Invalid) -> ForwardingTarget {
        var problems: [Problem] = []
        func required(_ value: String?, _ field: String) -> String? {
            guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
                problems.append(Problem(field: field, message: "Field cannot be blank."))
                return nil
            }
            return trimmed
        }
        func endpoint(_ value: String?, _ field: String, named name: String) -> URL? {
            let malformed = "\(name) is malformed"
            let refused = "\(name) is not allowed"
            guard let text = required(value, field) else { return nil }
            guard let url = URL(string: text), let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
                let host = components.host, !host.isEmpty
            else {
                problems.append(Problem(field: field, message: malformed))
                return nil
            }
            if components.user != nil || components.password != nil {
                problems.append(Problem(field: field, message: "\(refused): credentials go in their own fields, not in the URL"))
                return nil
            }
            if let refusal = addresses.refusal(host: host) {
                problems.append(Problem(field: field, message: "\(refused): \(refusal)"))
                return nil
            }
            // Credentials and health data go over TLS; plain HTTP only to this machine, and only
            // where the operator allows private targets (development and tests).
            if scheme == "http" && !(addresses.allowPrivate && OutboundAddressPolicy.isLoopback(host: host)) {
                problems.append(Problem(field: field, message: "\(refused): use https"))
                return nil
            }
            return url
        }

        switch request.type.lowercased() {
        case "disabled":
            return .disabled
        case "basic":
            let url = endpoint(request.url, "url", named: "Forwarding endpoint URL")
            let username = required(request.username, "username")
            let given = request.password.flatMap { $0.isEmpty || $0 == redacted ? nil : $0 }
            var kept: String?
            if case .basic(let storedURL, let storedUser, let storedPassword)? = stored {
                if let url, storedURL == url, storedUser == username { kept = storedPassword }
            }
            let password = given ?? kept
            if password == nil {
                let message = if case .basic? = stored {
                    "Enter the password again: the stored one is kept only while the URL and username stay the same."
                } else {
                    "Field cannot be blank."
                }
                problems.append(Problem(field: "password", message: message))
            }
            guard problems.isEmpty, let url, let username, let password else { throw Invalid(problems: problems) }
            return .basic(url: url, username: username, password: password)
        case "oauth":
            let tokenURL = endpoint(request.tokenRequestURL, "tokenRequestURL", named: "Token request URL")
            let field = required(request.tokenField, "tokenField")
            let header = required(request.header, "header")
            if let header, !header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                problems.append(Problem(field: "header", message: "The header name may hold only letters, digits, - and _"))
            }
            let url = endpoint(request.url, "url", named: "Forwarding endpoint URL")
            guard problems.isEmpty, let tokenURL, let field, let header, let url else { throw Invalid(problems: problems) }
            return .oauth(tokenRequestURL: tokenURL, tokenField: field, header: header, url: url)
        default:
            throw Invalid(problems: [Problem(field: "type", message: "type must be Disabled, Basic or OAuth")])
        }
    }

}

/// What each forwarded response is sent as.
package enum ForwardingFormat: String, Sendable, Equatable {
    /// The original's body (`ForwardedResponse`), one JSON POST to the URL.
    case json
    /// A FHIR R4 `transaction` Bundle POSTed to the URL, a FHIR server's base (docs/fhir.md,
    /// Forwarding).
    case fhir
}

/// The body a forwarded response carries (docs/response-api.md, Forwarding), built as JSON rather
/// than by string formatting: a participant enrolled without a token gets `"token": null`, not
/// the string `"null"`.
package struct ForwardedResponse: Encodable, Sendable {
    package struct Metadata: Encodable, Sendable {
        package var activityid: String
        package var version: String
    }

    package var type = "SurveyResponse"
    package var metadata: Metadata
    package var token: String?
    package var data: JSONValue

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(token, forKey: .token)
        try container.encode(data, forKey: .data)
    }

    private enum CodingKeys: String, CodingKey { case type, metadata, token, data }
}
