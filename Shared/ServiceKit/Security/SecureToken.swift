import Crypto
import Foundation

/// Bearer tokens, invitation tokens and similar secrets: random from the system CSPRNG, handed
/// out once, and stored only as their SHA-256.
public enum SecureToken {
    /// 256 random bits, base64url without padding (43 characters).
    public static func generate() -> String {
        let key = SymmetricKey(size: .bits256)
        return key.withUnsafeBytes { Base64URL.encode($0) }
    }

    /// What is stored: the token's SHA-256, hex. A leaked table gives no usable token.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }
}
