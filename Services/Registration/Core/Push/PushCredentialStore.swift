import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Each app's push credentials, sealed with AES-256-GCM under a key derived from
/// `STUDYSTACK_ENCRYPTION_KEY` (the app and platform are the associated data, so a sealed row
/// cannot be moved to another app). Only summaries ever leave the service.
package struct PushCredentialStore: Sendable {
    package let client: PostgresClient
    package let sealKey: SymmetricKey
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, encryptionKey: Data, audit: AuditLog, logger: Logger) {
        self.client = client
        sealKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey),
            info: Data("studystack-registration-push-credentials".utf8), outputByteCount: 32)
        self.audit = audit
        self.logger = logger
    }

    package static func associatedData(appId: String, platform: Platform) -> Data { Data("\(appId)\n\(platform.rawValue)".utf8) }

    /// Stores (or replaces) an app's credentials for their platform; returns the summary.
    package func save(_ credentials: PushCredentials, appId: String, actor: String) async throws -> PushCredentialSummary {
        let platform = credentials.platform
        let sealed = try AES.GCM.seal(
            try credentials.encoded(), using: sealKey, authenticating: Self.associatedData(appId: appId, platform: platform)
        ).storedBytes
        let summary = try credentials.summary(updatedAt: Date())
        // The summary is kept in the internal API's form: the list call answers it as stored.
        let summaryJSON = String(decoding: try InternalCoding.encoder.encode(summary), as: UTF8.self)
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO push_credentials (app_id, platform, sealed, summary)
                VALUES (\(appId), \(platform.rawValue), \(ByteBuffer(bytes: sealed)), \(summaryJSON)::jsonb)
                ON CONFLICT (app_id, platform) DO UPDATE
                SET sealed = excluded.sealed, summary = excluded.summary, updated_at = now()
                """, logger: logger)
            try await audit.record(
                actor: actor, action: "app.push_credentials_set",
                details: ["appId": appId, "platform": platform.rawValue, "publicKeySHA256": summary.publicKeySHA256],
                on: connection)
        }
        return summary
    }

    /// The credentials a sender signs with, or nil when the app has none for `platform`.
    package func credentials(appId: String, platform: Platform) async throws -> PushCredentials? {
        let rows = try await client.query(
            "SELECT sealed FROM push_credentials WHERE app_id = \(appId) AND platform = \(platform.rawValue)", logger: logger)
        for try await sealed in rows.decode(ByteBuffer.self) {
            let box = try AES.GCM.SealedBox(combined: Data(buffer: sealed))
            let opened = try AES.GCM.open(box, using: sealKey, authenticating: Self.associatedData(appId: appId, platform: platform))
            do {
                return try PushCredentials.parse(opened, for: platform)
            } catch {
                throw PushStoreError(description: "stored \(platform.rawValue) credentials of \(appId) no longer parse")
            }
        }
        return nil
    }

    package func summaries(appId: String) async throws -> [PushCredentialSummary] {
        let rows = try await client.query(
            "SELECT summary::text FROM push_credentials WHERE app_id = \(appId) ORDER BY platform", logger: logger)
        let decoder = InternalCoding.decoder
        var found: [PushCredentialSummary] = []
        for try await text in rows.decode(String.self) {
            found.append(try decoder.decode(PushCredentialSummary.self, from: Data(text.utf8)))
        }
        return found
    }

    /// Removes an app's credentials for `platform`; false when there were none.
    package func delete(appId: String, platform: Platform, actor: String) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM push_credentials WHERE app_id = \(appId) AND platform = \(platform.rawValue) RETURNING 1",
                logger: logger)
            var deleted = false
            for try await _ in rows { deleted = true }
            if deleted {
                try await audit.record(
                    actor: actor, action: "app.push_credentials_removed",
                    details: ["appId": appId, "platform": platform.rawValue], on: connection)
            }
            return deleted
        }
    }
}

package struct PushStoreError: Error, CustomStringConvertible {
    package var description: String
}
