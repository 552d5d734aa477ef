import Crypto
import Foundation

/// A secret kept in a row that the service must read back (not a one-way hash): AES-256-GCM under
/// a key derived (HKDF-SHA256) from `STUDYSTACK_ENCRYPTION_KEY` for one purpose, with the row's id
/// and the study as associated data, so a sealed value moved to another row does not open.
///
/// - `appTokens`: a participant's `participantId` in a study (the response service's app token,
///   their only credential there). The apps read it back after a sign-in on a new device, but a
///   copy of the registration database must not hand out every participant's key.
/// - `invitationTokens`: an invitation's enrollment token, e-mailed again when it is resent.
package struct RowSeal: Sendable {
    private let key: SymmetricKey

    package init(encryptionKey: Data, purpose: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data(purpose.utf8), outputByteCount: 32)
    }

    package static func appTokens(encryptionKey: Data) -> RowSeal {
        RowSeal(encryptionKey: encryptionKey, purpose: "studystack-registration-app-tokens")
    }

    package static func invitationTokens(encryptionKey: Data) -> RowSeal {
        RowSeal(encryptionKey: encryptionKey, purpose: "studystack-registration-invitation-tokens")
    }

    package func seal(_ text: String, row: UUID, studyId: String) throws -> [UInt8] {
        Array(try AES.GCM.seal(Data(text.utf8), using: key, authenticating: Self.context(row, studyId)).combined!)
    }

    /// The text, or nil when the box does not open under this key and row.
    package func open(_ sealed: [UInt8], row: UUID, studyId: String) -> String? {
        guard let box = try? AES.GCM.SealedBox(combined: Data(sealed)),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.context(row, studyId))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    private static func context(_ row: UUID, _ studyId: String) -> Data {
        Data("\(row.uuidString.lowercased())|\(studyId)".utf8)
    }
}
