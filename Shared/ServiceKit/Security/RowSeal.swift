import Crypto
import Foundation

/// A secret kept in a row that the service must read back (not a one-way hash): AES-256-GCM under
/// a key derived (HKDF-SHA256) from `STUDYSTACK_ENCRYPTION_KEY` for one purpose, with the row's id
/// and the study as associated data, so a sealed value moved to another row does not open.
///
/// - `appTokens` (registration): a participant's `participantId` in a study (the response service's app token,
///   their only credential there). The apps read it back after a sign-in on a new device, but a
///   copy of the registration database must not hand out every participant's key.
/// - `invitationTokens` (registration): an invitation's enrollment token, e-mailed again when it
///   is resent.
/// - `studyKeys` (response): a study's private key, which opens the archives Sage's clients seal
///   for its certificate.
public struct RowSeal: Sendable {
    private let key: SymmetricKey

    public init(encryptionKey: Data, purpose: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data(purpose.utf8), outputByteCount: 32)
    }

    public static func appTokens(encryptionKey: Data) -> RowSeal {
        RowSeal(encryptionKey: encryptionKey, purpose: "studystack-registration-app-tokens")
    }

    public static func invitationTokens(encryptionKey: Data) -> RowSeal {
        RowSeal(encryptionKey: encryptionKey, purpose: "studystack-registration-invitation-tokens")
    }

    public func seal(_ text: String, row: UUID, studyId: String) throws -> [UInt8] {
        try seal(Array(text.utf8), authenticating: Self.context(row, studyId))
    }

    /// The text, or nil when the box does not open under this key and row.
    public func open(_ sealed: [UInt8], row: UUID, studyId: String) -> String? {
        guard let box = try? AES.GCM.SealedBox(combined: Data(sealed)),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.context(row, studyId))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    public static func studyKeys(encryptionKey: Data) -> RowSeal {
        RowSeal(encryptionKey: encryptionKey, purpose: "studystack-response-study-keys")
    }

    /// Bytes sealed for the row `context` names (a study key, say).
    public func seal(_ bytes: [UInt8], context: String) throws -> [UInt8] {
        try seal(bytes, authenticating: Data(context.utf8))
    }

    /// The bytes, or nil when the box does not open under this key and context.
    public func open(_ sealed: [UInt8], context: String) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: Data(sealed)),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
        else { return nil }
        return Array(plain)
    }

    private func seal(_ bytes: [UInt8], authenticating context: Data) throws -> [UInt8] {
        // A box sealed with the default 12-byte nonce always has its combined form.
        guard let combined = try AES.GCM.seal(Data(bytes), using: key, authenticating: context).combined else {
            throw CryptoKitError.incorrectParameterSize
        }
        return Array(combined)
    }

    private static func context(_ row: UUID, _ studyId: String) -> Data {
        Data("\(row.uuidString.lowercased())|\(studyId)".utf8)
    }
}
