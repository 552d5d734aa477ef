import Crypto
import Foundation

/// Where signed consent PDFs are kept. Routes and stores see only this interface, so an object
/// store can replace the filesystem without touching them.
package protocol ConsentStorage: Sendable {
    /// Stores `pdf` under a new key and returns the key.
    func store(_ pdf: Data) async throws -> String
    /// Stores `pdf` under `id`'s key, replacing what that key held, and returns the key: a PDF
    /// moved in is stored under an id derived from its source, so an import run again after an
    /// interruption writes the same file rather than leaving another behind.
    func store(_ pdf: Data, id: UUID) async throws -> String
    func load(_ key: String) async throws -> Data
    /// Removes a stored PDF (one whose record was never written).
    func remove(_ key: String) async throws
}

/// Files under a directory (mode 0700; files 0600), sealed with AES-256-GCM under a key derived
/// from `STUDYSTACK_ENCRYPTION_KEY`: a signed consent names the participant. File names are random,
/// not user or study ids.
package struct FileConsentStorage: ConsentStorage {
    package let directory: URL
    package let key: SymmetricKey

    package init(directory: URL, encryptionKey: Data) {
        self.directory = directory
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack-registration-consents".utf8),
            outputByteCount: 32)
    }

    package func store(_ pdf: Data) async throws -> String {
        try await store(pdf, id: UUID())
    }

    package func store(_ pdf: Data, id: UUID) async throws -> String {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let name = id.uuidString.lowercased() + ".pdf.sealed"
        let sealed = try AES.GCM.seal(pdf, using: key, authenticating: Data(name.utf8)).storedBytes
        // Written aside and renamed over the name, so a reader never sees half a file.
        let partial = directory.appendingPathComponent(".\(name).\(UUID().uuidString.lowercased()).partial")
        guard FileManager.default.createFile(atPath: partial.path, contents: sealed, attributes: [.posixPermissions: 0o600])
        else { throw ConsentStorageError(reason: "could not write a consent file") }
        guard rename(partial.path, directory.appendingPathComponent(name).path) == 0 else {
            try? FileManager.default.removeItem(at: partial)
            throw ConsentStorageError(reason: "could not write a consent file")
        }
        return name
    }

    package func load(_ name: String) async throws -> Data {
        let sealed = try Data(contentsOf: try file(name))
        return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(name.utf8))
    }

    package func remove(_ name: String) async throws {
        try FileManager.default.removeItem(at: try file(name))
    }

    /// Keys are our own file names; anything else (a path) is refused.
    private func file(_ name: String) throws -> URL {
        // By scalar, and only the characters our names use: nothing a combining mark could hide.
        guard let first = name.unicodeScalars.first, first != ".",
            name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { throw ConsentStorageError(reason: "bad consent key") }
        return directory.appendingPathComponent(name)
    }
}

package struct ConsentStorageError: Error, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}
