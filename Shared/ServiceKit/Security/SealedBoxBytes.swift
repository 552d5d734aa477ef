import Crypto
import Foundation

extension AES.GCM.SealedBox {
    /// Nonce, ciphertext and tag in one, as every sealed value is stored. CryptoKit leaves
    /// `combined` nil only for a nonce that is not 12 bytes, which StudyStack never uses; should
    /// one appear, it is an error for the caller, not a trap.
    package var storedBytes: Data {
        get throws {
            guard let combined else { throw SealingError.notCombinable }
            return combined
        }
    }
}

/// A sealed box that cannot be written as one value.
package enum SealingError: Error {
    case notCombinable
}
