import Configuration
import Foundation
import ServiceKit

/// The settings only the response service reads.
public struct ResponseSettings: Sendable {
    public enum Settings {
        public static let encryptionKey = Setting("studystack.encryptionKey", secret: true)
        public static let maxTokenBatch = Setting("tokens.maxBatch")
    }

    /// AES-256 key (base64) for what is kept sealed at rest: enrollment tokens (the researcher
    /// downloads them again) and, later, forwarding credentials.
    public var encryptionKey: Data
    /// Largest enrollment-token batch one request may create.
    public var maxTokenBatch: Int

    public init(reader: ConfigReader) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        let keyText = try settings.requiredText(Settings.encryptionKey)
        guard let key = Data(base64Encoded: keyText), key.count == 32 else {
            throw ConfigurationError(Settings.encryptionKey, "must be 32 bytes in base64 (openssl rand -base64 32)")
        }
        encryptionKey = key
        maxTokenBatch = try settings.integer(Settings.maxTokenBatch, default: 100_000, in: 1...1_000_000)
    }
}
