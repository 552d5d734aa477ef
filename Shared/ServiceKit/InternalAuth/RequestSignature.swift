import Crypto
import Foundation

/// The header names and canonical string of a signed internal request.
///
/// The signature is HMAC-SHA256, with the caller's key, over
///
///     studystack-internal-v1 LF caller LF METHOD LF path LF query LF timestamp LF nonce LF sha256hex(body)
///
/// `path` and `query` are exactly as sent on the request line (no decoding, no reordering;
/// `query` is empty when there is none), `timestamp` is Unix seconds, and the result is sent
/// as lower-case hex. The caller's name is inside the signed text, so a valid signature cannot
/// be re-labelled as coming from another caller.
public enum RequestSignature {
    public static let serviceHeader = "X-StudyStack-Service"
    public static let timestampHeader = "X-StudyStack-Timestamp"
    public static let nonceHeader = "X-StudyStack-Nonce"
    public static let signatureHeader = "X-StudyStack-Signature"

    /// How far a request's timestamp may be from the receiver's clock, either way.
    public static let allowedClockSkew: TimeInterval = 300

    public static func canonicalString(
        caller: String, method: String, path: String, query: String, timestamp: Int64, nonce: String, body: some DataProtocol
    ) -> String {
        let bodyHash = SHA256.hash(data: body).hexString
        return ["studystack-internal-v1", caller, method.uppercased(), path, query, String(timestamp), nonce, bodyHash]
            .joined(separator: "\n")
    }

    public static func sign(_ canonical: String, key: SymmetricKey) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(canonical.utf8), using: key).hexString
    }

    /// Constant-time check of a hex signature against a key.
    public static func isValid(signature: String, for canonical: String, key: SymmetricKey) -> Bool {
        guard let mac = Data(hexString: signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(canonical.utf8), using: key)
    }

    /// A nonce from the system CSPRNG: 128 bits as 32 hex characters.
    public static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.hexString
    }

    /// Nonces are 16 to 128 characters of URL-safe text.
    public static func isWellFormedNonce(_ nonce: String) -> Bool {
        (16...128).contains(nonce.utf8.count)
            && nonce.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hex digits (by table: `String(format:)` per byte is slow enough to show up in
    /// the app API's request time, which hashes every credential).
    public var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Digest {
    public var hexString: String { Array(self.makeIterator()).hexString }
}

extension HashedAuthenticationCode {
    public var hexString: String { Array(self.makeIterator()).hexString }
}

extension Data {
    /// Decodes lower- or upper-case hex; `nil` for anything else.
    init?(hexString: String) {
        let bytes = Array(hexString.utf8)
        guard bytes.count % 2 == 0 else { return nil }
        var data = Data(capacity: bytes.count / 2)
        var index = 0
        while index < bytes.count {
            guard let high = Self.nibble(bytes[index]), let low = Self.nibble(bytes[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        self = data
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
