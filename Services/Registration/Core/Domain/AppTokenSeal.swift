import Crypto
import Foundation

/// A participant's `participantId` in a study (the response service's app token, their only
/// credential there) is kept sealed: the apps read it back after a sign-in on a new device, so it
/// cannot be a one-way hash, but a copy of the registration database must not hand out every
/// participant's key to the response service.
///
/// AES-256-GCM under a key derived (HKDF-SHA256) from `STUDYSTACK_ENCRYPTION_KEY`; the user and the
/// study are the associated data, so a sealed token moved to another row does not open.
package struct AppTokenSeal: Sendable {
    private let key: SymmetricKey

    package init(encryptionKey: Data) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack-registration-app-tokens".utf8),
            outputByteCount: 32)
    }

    package func seal(_ participantId: String, userId: UUID, studyId: String) throws -> [UInt8] {
        Array(try AES.GCM.seal(Data(participantId.utf8), using: key, authenticating: Self.context(userId, studyId)).combined!)
    }

    /// The token, or nil when the box does not open under this key and row.
    package func open(_ sealed: [UInt8], userId: UUID, studyId: String) -> String? {
        guard let box = try? AES.GCM.SealedBox(combined: Data(sealed)),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.context(userId, studyId))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    private static func context(_ userId: UUID, _ studyId: String) -> Data {
        Data("\(userId.uuidString.lowercased())|\(studyId)".utf8)
    }
}
