import HTTPTypes

/// The headers every console response carries (errors included): a strict Content-Security-Policy
/// (scripts and styles from the console only, so no inline script runs; no plugins; forms post
/// only to the console; no framing), framing refused for old browsers too, no MIME sniffing, and
/// no referrer sent to other sites.
package enum ConsoleHeaders {
    package static let policy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' https: data:",
        "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
    ].joined(separator: "; ")

    package static let fields: HTTPFields = [
        .contentSecurityPolicy: policy,
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .xContentTypeOptions: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]
}
