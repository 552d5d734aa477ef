import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import ServiceLifecycle
import StudyModels
import Synchronization

/// In-memory copies of what every app-API request needs and what changes rarely: which app and
/// platform a credential stands for, app definitions, and each app's current published studies.
/// With them an app-API request that hits the reply cache touches no database at all.
///
/// Whatever changes these writes `NOTIFY studystack_catalog` in its transaction; every replica's
/// `ChangeListener` clears its copies when the notification arrives (after the commit), and
/// the replica that made the change clears its own at once. The copies are only used while the
/// listener is connected, and expire after `timeToLive` in any case, so a lost notification can
/// leave a replica stale for at most that long.
package final class CatalogCache: Sendable {
    package static let channel = "studystack_catalog"

    private struct Entry<Value: Sendable>: Sendable {
        package var value: Value
        package var loadedAt: ContinuousClock.Instant
    }

    private struct State: Sendable {
        package var credentials: [SHA256.Digest: Entry<AppStore.Credential>] = [:]
        package var apps: [String: Entry<AppDefinition>] = [:]
        package var studies: [String: Entry<[PublishedStudies.Current]>] = [:]
        /// Moves on every invalidation, so a load that raced with one is not kept.
        package var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    private let listening = Atomic<Bool>(false)
    package let timeToLive: Duration
    /// A bound on memory: credentials are keyed by what clients send, which they choose.
    package let capacity: Int

    package init(timeToLive: Duration = .seconds(30), capacity: Int = 10_000) {
        self.timeToLive = timeToLive
        self.capacity = capacity
    }

    /// Drops every copy (a change was committed, or notifications may have been missed).
    package func invalidateAll() {
        state.withLock { state in
            state.credentials.removeAll(keepingCapacity: true)
            state.apps.removeAll(keepingCapacity: true)
            state.studies.removeAll(keepingCapacity: true)
            state.generation &+= 1
        }
    }

    package func setListening(_ value: Bool) {
        listening.store(value, ordering: .releasing)
        invalidateAll()
    }

    /// The app and platform of an `Authorization: Basic` header. Only known credentials are
    /// kept (keyed by the header's SHA-256), so unknown ones always reach the database.
    package func credential(
        header: String, load: () async throws -> AppStore.Credential?
    ) async throws -> AppStore.Credential? {
        try await cached(Self.digest(header), \.credentials, load: load)
    }

    /// A header's SHA-256, hashed from its bytes as they are (no copy, no hex text: this is on
    /// every app-API request).
    static func digest(_ header: String) -> SHA256.Digest {
        var header = header
        return header.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
    }

    package func app(id: String, load: () async throws -> AppDefinition?) async throws -> AppDefinition? {
        try await cached(id, \.apps, load: load)
    }

    package func studies(
        appId: String, load: () async throws -> [PublishedStudies.Current]
    ) async throws -> [PublishedStudies.Current] {
        try await cached(appId, \.studies, load: { try await load() }) ?? []
    }

    private func cached<Key: Hashable, Value: Sendable>(
        _ key: Key, _ table: WritableKeyPath<State, [Key: Entry<Value>]>,
        load: () async throws -> Value?
    ) async throws -> Value? {
        guard listening.load(ordering: .acquiring) else { return try await load() }
        let now = ContinuousClock.now
        let (hit, generation) = state.withLock { state in
            (state[keyPath: table][key].flatMap { now - $0.loadedAt < timeToLive ? $0.value : nil }, state.generation)
        }
        if let hit { return hit }
        guard let value = try await load() else { return nil }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state[keyPath: table].count >= capacity { state[keyPath: table].removeAll(keepingCapacity: true) }
            state[keyPath: table][key] = Entry(value: value, loadedAt: now)
        }
        return value
    }

    /// Tells every replica, once `connection`'s transaction commits, that the catalog changed.
    package static func notifyChange(on connection: PostgresConnection, logger: Logger) async throws {
        try await ChangeListener.notify(channel, on: connection, logger: logger)
    }

    /// Clears the cache on every change notification, and trusts it only while the service's
    /// listener is listening (a change made while it was not would go unheard).
    package func listen(through changes: ChangeListener) {
        changes.register(
            channel: Self.channel, notified: { [self] in invalidateAll() }, listening: { [self] in setListening($0) })
    }
}
