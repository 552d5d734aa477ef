import Foundation
import ServiceKit
import StudyModels

/// An admin's own API keys, for researchers' scripts: each named, living a bounded number of
/// days, at most `APIKeyStore.maximumLive` at a time. Refusals are `StudyMetadataError`s.
package struct APIKeys: Sendable {
    package let store: any APIKeyRegistry

    package init(store: any APIKeyRegistry) {
        self.store = store
    }

    /// A new key for `admin`; the key itself is answered this once and stored hashed.
    package func create(for admin: AuthenticatedAdmin, name: String, days: Int?) async throws -> APIKeyCreated {
        let name = TextRules.singleLineField(name, maximum: 100)
        var problems: [ValidationProblem] = []
        if name == nil {
            problems.append(.init(pointer: "/name", message: "Give the key a name of 1 to 100 characters on one line."))
        }
        let days = days ?? APIKeyStore.defaultDays
        if !(1...APIKeyStore.maximumDays).contains(days) {
            problems.append(.init(pointer: "/expiresInDays", message: "A key lives 1 to \(APIKeyStore.maximumDays) days."))
        }
        guard let name, problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .apiKey) }
        do {
            return try await store.create(for: admin, name: name, days: days)
        } catch APIKeyStore.Refusal.tooMany {
            throw StudyMetadataError.tooManyKeys
        }
    }

    package func revoke(_ keyId: String, of admin: AuthenticatedAdmin) async throws {
        guard let id = UUID(uuidString: keyId), try await store.revoke(id, of: admin) else { throw StudyMetadataError.noKey }
    }
}
