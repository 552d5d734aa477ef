import Crypto
import Foundation
import ServiceKit

/// A signed-in admin as the console keeps them: in the browser's cookie only, sealed, so any
/// replica serves any session and the console holds nothing in memory.
package struct ConsoleSession: Codable, Sendable, Equatable {
    /// study-metadata's bearer token for the admin; every admin API call carries it.
    package var token: String
    /// The admin's e-mail, for the page header.
    package var email: String
    /// The form token this session's pages carry; a POST whose form token differs is refused.
    package var csrf: String
    /// When the cookie stops being accepted, whatever the token's own expiry (whole seconds, as
    /// the cookie carries it).
    package var expiresAt: Date {
        didSet { expiresAt = Self.wholeSeconds(expiresAt) }
    }

    package init(token: String, email: String, csrf: String = ConsoleSession.makeCSRFToken(), expiresAt: Date) {
        self.token = token
        self.email = email
        self.csrf = csrf
        self.expiresAt = Self.wholeSeconds(expiresAt)
    }

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// 32 bytes from the CSPRNG, base64url.
    package static func makeCSRFToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Base64URL.encode($0) }
    }

    /// Whether a submitted form token is this session's, compared in constant time.
    package func acceptsForm(token submitted: String?) -> Bool {
        guard let submitted else { return false }
        let expected = Array(csrf.utf8)
        let given = Array(submitted.utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }
}

/// Seals sessions into cookie values and opens them again: AES-256-GCM under a key derived
/// (HKDF-SHA256) from the console key, with the cookie's name and version as associated data.
/// A value that was altered, sealed under another key, expired, or too long to be one is refused.
package struct SessionSealer: Sendable {
    /// Cookie values past this length are refused before any work (a session seals to ~300 bytes).
    package static let maxCookieLength = 4096
    static let info = Data("studystack-console-session-v1".utf8)
    static let associatedData = Data("studystack_session.v1".utf8)

    let key: SymmetricKey
    /// The sessions opened last, by the exact cookie value: a signed-in admin sends the same value
    /// with every page, and opening it (AES-GCM, then JSON) is a twentieth of a page's work. Only
    /// a value that opened is kept, so nobody can fill this with values of their own making, and
    /// the expiry is checked on every use.
    let opened = VersionedCache<String, ConsoleSession>(maxEntries: 4096, maxBytes: 4 * 1024 * 1024)

    /// `consoleKey`: the 32-byte `CONSOLE_KEY`.
    package init(consoleKey: SymmetricKey) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: consoleKey, info: Self.info, outputByteCount: 32)
    }

    package func seal(_ session: ConsoleSession) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let box = try AES.GCM.seal(try encoder.encode(session), using: key, authenticating: Self.associatedData)
        // (Only a nonce of another size than the default leaves `combined` empty.)
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return Base64URL.encode(combined)
    }

    /// The session a cookie value holds, or nil when it cannot be trusted or has expired.
    package func open(_ value: String, now: Date = Date()) -> ConsoleSession? {
        guard value.utf8.count <= Self.maxCookieLength else { return nil }
        if let session = opened.value(value, version: "") { return session.expiresAt > now ? session : nil }
        guard let sealed = Base64URL.decode(value),
            let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: Self.associatedData)
        else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let session = try? decoder.decode(ConsoleSession.self, from: plaintext), session.expiresAt > now else { return nil }
        opened.keep(session, under: value, version: "", bytes: value.utf8.count + plaintext.count)
        return session
    }
}
