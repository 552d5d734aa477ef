import Crypto
import Foundation

/// Request bodies that carry secrets (an app's push keys) are sealed before they leave the
/// caller, so they are never in clear on the wire or in a proxy's log even where the internal
/// network has no TLS.
///
/// AES-256-GCM under a key derived (HKDF-SHA256) from the caller's pair key for the receiver, which
/// the receiver already holds to verify the signature; the request path is the associated data, so
/// a sealed body cannot be replayed to another app or platform.
public enum SealedBody {
    static let info = Data("studystack-internal-sealed-body-v1".utf8)

    static func key(from signingKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: signingKey, info: info, outputByteCount: 32)
    }

    /// Seals `plaintext` for a request to `peer`'s `path`, under this service's pair key for `peer`.
    public static func seal(_ plaintext: some DataProtocol, to peer: ServiceName, path: String, keys: InternalKeys) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key(from: keys.signingKey(for: peer)), authenticating: Data(path.utf8))
        return Array(try box.storedBytes)
    }

    /// Opens a body `caller` sealed for `path`; nil when no key of that caller opens it.
    public static func open(_ sealed: some DataProtocol, from caller: String, path: String, keys: InternalKeys) -> Data? {
        guard let box = try? AES.GCM.SealedBox(combined: Data(sealed)) else { return nil }
        for callerKey in keys.callerKeys[caller] ?? [] {
            if let opened = try? AES.GCM.open(box, using: key(from: callerKey), authenticating: Data(path.utf8)) {
                return opened
            }
        }
        return nil
    }
}
