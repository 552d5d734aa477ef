import Crypto
import Foundation

/// The HMAC keys of service-to-service authentication.
///
/// Each service has its own key (`INTERNAL_SIGNING_KEY`), which never leaves it. It signs a call
/// to a peer with the *pair key* derived from it for that peer (HKDF-SHA256, see `pairKey`), and a
/// receiver lists in `INTERNAL_CALLER_KEYS`, as `name=base64key` pairs separated by commas, the
/// pair keys of the callers it accepts, derived for itself. A receiver therefore holds nothing
/// that signs a call to any other service: a compromised response service can forge study-metadata's
/// calls to the response service, and nowhere else. A name may appear more than once, so a new
/// key can be rolled out next to the old one and the old one removed afterwards.
public struct InternalKeys: Sendable {
    /// Smallest key accepted: 256 bits, the HMAC-SHA256 block-size guidance.
    public static let minimumKeyBytes = 32

    public let ownName: ServiceName
    public let signingKey: SymmetricKey
    public let callerKeys: [String: [SymmetricKey]]
    /// `signingKey(for:)` of every peer, derived once: the HKDF was on every internal call.
    private let peerKeys: [ServiceName: SymmetricKey]

    public init(ownName: ServiceName, signingKey: SymmetricKey, callerKeys: [String: [SymmetricKey]]) {
        self.ownName = ownName
        self.signingKey = signingKey
        self.callerKeys = callerKeys
        peerKeys = Self.peerKeys(ownName: ownName, signingKey: signingKey)
    }

    private static func peerKeys(ownName: ServiceName, signingKey: SymmetricKey) -> [ServiceName: SymmetricKey] {
        Dictionary(uniqueKeysWithValues: ServiceName.allCases.map { peer in
            (peer, pairKey(callerKey: signingKey, caller: ownName.rawValue, receiver: peer.rawValue))
        })
    }

    /// Parses the two settings; errors name the setting and never echo key material.
    public init(ownName: ServiceName, signingKey: String, callerKeys: String?) throws(ConfigurationError) {
        let signingSetting = ServiceSettings.Keys.internalSigningKey
        let callerSetting = ServiceSettings.Keys.internalCallerKeys
        self.ownName = ownName
        self.signingKey = try Self.decodeKey(signingKey, setting: signingSetting)
        var parsed: [String: [SymmetricKey]] = [:]
        for entry in (callerKeys ?? "").split(separator: ",") {
            let pair = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, Self.isValidCallerName(pair[0]) else {
                throw ConfigurationError(
                    callerSetting, "each entry must be name=base64key with a name of a-z, 0-9 and -")
            }
            parsed[pair[0], default: []].append(try Self.decodeKey(pair[1], setting: callerSetting))
        }
        self.callerKeys = parsed
        peerKeys = Self.peerKeys(ownName: ownName, signingKey: self.signingKey)
    }

    /// The key `caller` signs its calls to `receiver` with: HKDF-SHA256 of the caller's own key
    /// (no salt) with the info `studystack-internal-pair-v1 <caller> -> <receiver>`.
    /// `scripts/internal-keys.py` computes the same for configuration.
    public static func pairKey(callerKey: SymmetricKey, caller: String, receiver: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: callerKey, info: Data("studystack-internal-pair-v1 \(caller) -> \(receiver)".utf8),
            outputByteCount: 32)
    }

    /// The key this service signs its calls to `peer` with.
    public func signingKey(for peer: ServiceName) -> SymmetricKey {
        peerKeys[peer] ?? Self.pairKey(callerKey: signingKey, caller: ownName.rawValue, receiver: peer.rawValue)
    }

    /// The `INTERNAL_CALLER_KEYS` entry value `receiver` needs to accept `caller`, from the
    /// caller's base64 signing key.
    public static func callerEntry(callerKey base64: String, caller: ServiceName, receiver: ServiceName) -> String? {
        guard let data = Data(base64Encoded: base64) else { return nil }
        return pairKey(callerKey: SymmetricKey(data: data), caller: caller.rawValue, receiver: receiver.rawValue)
            .withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// A fresh random key, base64-encoded, as `make run` writes into `.data/secrets.env`.
    public static func generateKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    static func isValidCallerName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.allSatisfy { ($0.isASCII && $0.isLetter && $0.isLowercase) || $0.isNumber || $0 == "-" }
    }

    private static func decodeKey(_ text: String, setting: Setting) throws(ConfigurationError) -> SymmetricKey {
        guard let data = Data(base64Encoded: text) else {
            throw ConfigurationError(setting, "a key is not valid base64")
        }
        guard data.count >= minimumKeyBytes else {
            throw ConfigurationError(setting, "a key is \(data.count) bytes; at least \(minimumKeyBytes) bytes are required")
        }
        return SymmetricKey(data: data)
    }
}
