import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels
import Synchronization

/// What the apps are served: published studies, read from their frozen versions.
///
/// A frozen version never changes, so its decoded document is cached in memory for good, keyed
/// by (study, version). Which version is current, in which status, comes from the `CatalogCache`,
/// which every replica clears when a lifecycle action commits.
package struct PublishedStudies: Sendable {
    /// A study as the apps may see it now.
    ///
    /// A class: every app-API request takes one from the catalog cache, and a copy of a struct
    /// holding a whole `StudyDocument` retains each of its parts.
    package final class Current: Sendable {
        package let studyId: String
        package let status: StudyStatus
        package let version: Int
        package let consentVersion: Int
        package let activityVersions: [String: Int]
        package let document: StudyDocument
        package let launchedAt: Date?

        package init(
            studyId: String, status: StudyStatus, version: Int, consentVersion: Int, activityVersions: [String: Int],
            document: StudyDocument, launchedAt: Date?
        ) {
            self.studyId = studyId
            self.status = status
            self.version = version
            self.consentVersion = consentVersion
            self.activityVersions = activityVersions
            self.document = document
            self.launchedAt = launchedAt
        }
    }

    /// One frozen version's date and activity versions, for `activityList`.
    package struct VersionStamp: Sendable {
        package var version: Int
        package var publishedAt: Date
        package var activityVersions: [String: Int]
    }

    package let client: PostgresClient
    package let catalog: CatalogCache
    package let logger: Logger
    private let cache: DocumentCache
    /// Replies rendered from a frozen version, keyed by everything they depend on (study, version,
    /// platform, language, ...). Like the documents, they never go stale.
    package let replies: ReplyCache

    package init(client: PostgresClient, catalog: CatalogCache, logger: Logger) {
        self.client = client
        self.catalog = catalog
        self.logger = logger
        cache = DocumentCache()
        replies = ReplyCache()
    }

    /// The app's published studies (never pre-launch ones), each at its newest version; from the
    /// catalog cache when it is live. Studies in testing are included only for `testing`, a test
    /// build's credential: to every other caller they do not exist.
    package func current(appId: String, testing: Bool, studyId: String? = nil) async throws -> [Current] {
        let studies = try await catalog.studies(appId: appId) { try await load(appId: appId) }
        return studies.filter { study in
            (testing || study.status != .testing) && (studyId.map { study.studyId == $0 } ?? true)
        }
    }

    private func load(appId: String) async throws -> [Current] {
        let rows = try await client.query(
            """
            SELECT s.study_id, s.status, v.version, v.consent_version, v.activity_versions::text, s.launched_at
            FROM studies s
            JOIN LATERAL (
                SELECT version, consent_version, activity_versions FROM study_versions
                WHERE study_id = s.study_id ORDER BY version DESC LIMIT 1
            ) v ON true
            WHERE s.app_id = \(appId) AND s.status <> 'pre_launch'
            ORDER BY s.study_id
            """, logger: logger)
        var found: [(String, StudyStatus, Int, Int, [String: Int], Date?)] = []
        for try await (id, status, version, consent, activities, launchedAt) in rows.decode(
            (String, String, Int, Int, String, Date?).self)
        {
            guard let status = StudyStatus(rawValue: status) else { continue }
            found.append(
                (id, status, version, consent, try JSONDecoder().decode([String: Int].self, from: Data(activities.utf8)),
                 launchedAt))
        }
        var studies: [Current] = []
        for (id, status, version, consent, activities, launchedAt) in found {
            studies.append(Current(
                studyId: id, status: status, version: version, consentVersion: consent, activityVersions: activities,
                document: try await document(studyId: id, version: version), launchedAt: launchedAt))
        }
        return studies
    }

    /// Every study that has been published at least once, as the other services see it (a resync).
    /// A published study's app and status; nil when the study has no published version.
    package func standing(studyId: String) async throws -> StudyStanding? {
        let rows = try await client.query(
            """
            SELECT s.study_id, s.app_id, s.status, v.document->'name'
            FROM studies s
            JOIN LATERAL (SELECT document FROM study_versions WHERE study_id = s.study_id ORDER BY version DESC LIMIT 1) v ON true
            WHERE s.study_id = \(studyId)
            """, logger: logger)
        var found: StudyStanding?
        for try await (id, appId, status, name) in rows.decode((String, String, String, String?).self) {
            guard let status = StudyEvent.Status(rawValue: status) else { return nil }
            let title = name.flatMap { try? JSONDecoder().decode(LocalizedText.self, from: Data($0.utf8)) }?.text(for: nil)
            found = StudyStanding(studyId: id, appId: appId, status: status, name: title)
        }
        found?.consentVersionsInForce = try await consentVersionsInForce(studyId: studyId)
        return found
    }

    package func studyEvents(now: Date = Date()) async throws -> [StudyEvent] {
        let rows = try await client.query(
            """
            SELECT s.study_id, s.app_id, a.org_id, s.status, v.version, v.consent_version, v.activity_versions::text
            FROM studies s
            JOIN apps a ON a.app_id = s.app_id
            JOIN LATERAL (
                SELECT version, consent_version, activity_versions FROM study_versions
                WHERE study_id = s.study_id ORDER BY version DESC LIMIT 1
            ) v ON true
            ORDER BY s.study_id
            """, logger: logger)
        var found: [(String, String, String, String, VersionCounters)] = []
        for try await (id, appId, orgId, status, version, consent, activities) in rows.decode(
            (String, String, String, String, Int, Int, String).self)
        {
            let counters = VersionCounters(
                study: version, consent: consent,
                activities: try JSONDecoder().decode([String: Int].self, from: Data(activities.utf8)))
            found.append((id, appId, orgId, status, counters))
        }
        var events: [StudyEvent] = []
        for (id, appId, orgId, status, counters) in found {
            guard let status = StudyStatus(rawValue: status) else { continue }
            let document = try await document(studyId: id, version: counters.study)
            events.append(StudyEvent.make(
                studyId: id, appId: appId, orgId: orgId, status: status, latest: (counters, document), action: nil, at: now))
        }
        return events
    }

    /// A frozen version's document, from the cache or, the first time, from PostgreSQL.
    package func document(studyId: String, version: Int) async throws -> StudyDocument {
        if let cached = cache.get(studyId, version) { return cached }
        let rows = try await client.query(
            "SELECT document::text FROM study_versions WHERE study_id = \(studyId) AND version = \(version)", logger: logger)
        for try await text in rows.decode(String.self) {
            let document = try JSONDecoder().decode(StudyDocument.self, from: Data(text.utf8))
            cache.put(studyId, version, document)
            return document
        }
        throw StudyMetadataError.noVersion(studyId: studyId, version: version)
    }

    /// The newest study version holding the design the apps call version `label` of `activityId`,
    /// and that design's number: the label an admin gave it, or a numbered label (`1.2`) or plain
    /// number of a design without one. The activity id is matched as written, or else in any case.
    package func version(studyId: String, activityId: String, label: String) async throws
        -> (version: Int, activityVersion: Int)?
    {
        let labels = try await client.withConnection { connection in
            try await StudyVersionStore.activityLabels(studyId: studyId, activityId: activityId, on: connection, logger: logger)
        }
        let ordered = labels.filter { $0.activityId == activityId } + labels.filter { $0.activityId != activityId }
        if let match = ordered.first(where: { $0.label == label }) { return (match.studyVersion, match.activityVersion) }
        // A numbered design asked for by number (`2`) or as numbered in another form.
        guard let number = WireDates.version(fromLabel: label) else { return nil }
        return ordered.first { $0.activityVersion == number && $0.label == VersionCounters.label(number) }
            .map { ($0.studyVersion, $0.activityVersion) }
    }

    /// The study version the apps call `label`, and its consent version: the version whose
    /// document gave it that label, else the numbered version of that number when it has no label
    /// of its own. Nil for a label no version had.
    package func version(studyId: String, studyLabel label: String) async throws -> PublishedVersionLabels? {
        let labels = try await client.withConnection { connection in
            try await StudyVersionStore.versionLabels(studyId: studyId, on: connection, logger: logger)
        }
        return VersionCounters.find(label, in: labels, number: \.version, own: \.versionLabel).last
    }

    /// The newest study version holding the consent version the apps call `label`, found as
    /// `version(studyId:studyLabel:)` finds a study version.
    package func version(studyId: String, consentLabel label: String) async throws -> PublishedVersionLabels? {
        let labels = try await client.withConnection { connection in
            try await StudyVersionStore.versionLabels(studyId: studyId, on: connection, logger: logger)
        }
        return VersionCounters.find(label, in: labels, number: \.consentVersion, own: \.consentLabel).last
    }

    /// Every version's date and activity versions, oldest first.
    package func history(studyId: String) async throws -> [VersionStamp] {
        let rows = try await client.query(
            "SELECT version, published_at, activity_versions::text FROM study_versions WHERE study_id = \(studyId) ORDER BY version",
            logger: logger)
        var stamps: [VersionStamp] = []
        for try await (version, at, activities) in rows.decode((Int, Date, String).self) {
            stamps.append(VersionStamp(
                version: version, publishedAt: at,
                activityVersions: try JSONDecoder().decode([String: Int].self, from: Data(activities.utf8))))
        }
        return stamps
    }

    /// Every published version of the study, oldest first, with the activity versions it held
    /// (labelled as the apps see them); nil when the study was never published. Each document is
    /// read through the cache of frozen versions.
    package func versionHistory(studyId: String) async throws -> StudyVersionHistory? {
        let stamps = try await history(studyId: studyId)
        guard !stamps.isEmpty else { return nil }
        var versions: [StudyVersionHistory.Version] = []
        for stamp in stamps {
            let document = try await document(studyId: studyId, version: stamp.version)
            versions.append(StudyVersionHistory.Version(
                version: stamp.version, label: VersionCounters.studyLabel(of: document, version: stamp.version),
                publishedAt: stamp.publishedAt,
                name: document.name.text(for: nil),
                activities: document.activities.map { activity in
                    let number = stamp.activityVersions[activity.activityId] ?? 1
                    return StudyEvent.ActivityVersion(
                        activityId: activity.activityId, version: number, label: VersionCounters.label(of: activity, version: number),
                        type: activity.kind.rawValue)
                }))
        }
        return StudyVersionHistory(studyId: studyId, versions: versions)
    }

    /// What changed in the versions after `version`.
    package func changes(studyId: String, after version: Int) async throws -> StudyChanges {
        let rows = try await client.query(
            "SELECT changes::text FROM study_versions WHERE study_id = \(studyId) AND version > \(version)", logger: logger)
        var total = StudyChanges(consent: false, activities: false, resources: false, info: false)
        for try await text in rows.decode(String.self) {
            let changes = try JSONDecoder().decode(StudyChanges.self, from: Data(text.utf8))
            total.consent = total.consent || changes.consent
            total.activities = total.activities || changes.activities
            total.resources = total.resources || changes.resources
            total.info = total.info || changes.info
            total.reconsent = total.reconsent || changes.reconsent
        }
        return total
    }

    /// Whether consent version `consentVersion` asked those who signed an earlier one to sign
    /// again: the choice made when the version that changed the consent to it was published.
    package func reconsent(studyId: String, consentVersion: Int) async throws -> Bool {
        let rows = try await client.query(
            """
            SELECT coalesce((changes->>'reconsent')::boolean, false) FROM study_versions
            WHERE study_id = \(studyId) AND consent_version = \(consentVersion) ORDER BY version LIMIT 1
            """, logger: logger)
        for try await reconsent in rows.decode(Bool.self) { return reconsent }
        return false
    }

    /// The consent versions (as the apps name them) a participant's signature satisfies: the one
    /// the newest re-consent asked for and every one after it; nil when no version ever asked
    /// anyone to sign again, so any signature does.
    package func consentVersionsInForce(studyId: String) async throws -> [String]? {
        let rows = try await client.query(
            """
            SELECT v.consent_version, v.document->'consent'->>'versionLabel',
                   coalesce((v.changes->>'reconsent')::boolean, false)
            FROM study_versions v WHERE v.study_id = \(studyId) ORDER BY v.version
            """, logger: logger)
        var labels: [String] = []
        var asked = false
        for try await (number, label, reconsent) in rows.decode((Int, String?, Bool).self) {
            if reconsent { (labels, asked) = ([], true) }
            let name = label ?? VersionCounters.label(number)
            if !labels.contains(where: { $0.unicodeScalars.elementsEqual(name.unicodeScalars) }) { labels.append(name) }
        }
        return asked ? labels : nil
    }
}

/// Encoded replies derived only from frozen versions.
package final class ReplyCache: Sendable {
    private let entries = Mutex<[String: ByteBuffer]>([:])
    /// A bound on memory: a study has a handful of versions, platforms and languages.
    private let capacity = 10_000

    /// The cached reply for `key`, or `render()`'s, cached.
    package func reply(_ key: String, render: () async throws -> ByteBuffer) async rethrows -> ByteBuffer {
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let rendered = try await render()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = rendered
        }
        return rendered
    }
}

/// Decoded documents of frozen versions. They never change, so entries never go stale.
package final class DocumentCache: Sendable {
    private struct Key: Hashable {
        package var studyId: String
        package var version: Int
    }

    private let entries = Mutex<[Key: StudyDocument]>([:])

    package func get(_ studyId: String, _ version: Int) -> StudyDocument? {
        entries.withLock { $0[Key(studyId: studyId, version: version)] }
    }

    package func put(_ studyId: String, _ version: Int, _ document: StudyDocument) {
        entries.withLock { $0[Key(studyId: studyId, version: version)] = document }
    }
}

extension PublishedStudies {
    /// The protocol the schema app is served for `studyId`: the newest published version's, while
    /// the study is launched (active) and enrolling; nil otherwise, or for a study that was not
    /// imported from a schema protocol.
    package func servedSchemaProtocol(studyId: String) async throws -> (version: Int, source: StudySource)? {
        guard let standing = try await standing(studyId: studyId), standing.status == .active,
            let current = try await current(appId: standing.appId, testing: false, studyId: studyId).first,
            current.status == .active, current.document.enrolling,
            let source = current.document.source, source.format == .schema
        else { return nil }
        return (current.version, source)
    }
}
