import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Two replicas on one database: what one publishes, the other serves without a restart, though
/// both keep credentials, apps and current versions in memory.
@Suite struct CatalogCacheTests {
    let helper = MetadataAdmin()
    let api = WCPApp()

    @Test(.needsCluster) func aChangeOnOneReplicaReachesTheOthersCache() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                // Copies kept long enough that only a notification can refresh them, however slow the machine.
                overrides: [
                    "studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!",
                    "catalog.cacheSeconds": "3600", "response.url": try await SharedResponsePeer.url(),
                ])
            let first = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "replica-a"))
            let second = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "replica-b"))
            try await first.test(.router) { a in
                try await TestApplication.waitUntilReady(a)
                try await second.test(.router) { b in
                    try await TestApplication.waitUntilReady(b)
                    let root = try await helper.login(a, "root@studystack.test", "Sup3r-Secret!")
                    let (_, created) = try await helper.send(a, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
                    let credentials = try JSONSerialization.jsonObject(with: Data(buffer: created)) as! [String: Any]
                    let ios = (credentials["credentials"] as! [String: String])["ios"]!
                    let headers = WCPApp.headers(ios)

                    // B learns the credential and caches an empty list.
                    let ids = { (reply: [String: Any]) in (reply["studies"] as? [[String: Any]] ?? []).compactMap { $0["studyId"] as? String } }
                    #expect(ids(try await api.get(b, "/StudyMetaData/studyList", headers).1) == [])
                    #expect(ids(try await api.get(b, "/StudyMetaData/studyList", headers).1) == [])

                    // A launches a study; B serves it once the notification arrives (well under a second).
                    let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
                    _ = try await helper.send(a, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
                    #expect(try await helper.send(a, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
                    // A itself sees it at once.
                    #expect(ids(try await api.get(a, "/StudyMetaData/studyList", headers).1) == ["SLEEPWELL"])
                    try await eventually { ids(try await api.get(b, "/StudyMetaData/studyList", headers).1) == ["SLEEPWELL"] }

                    // A pause on A: B reports the new status.
                    _ = try await helper.send(a, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root)
                    try await eventually {
                        (try await api.get(b, "/StudyMetaData/study?studyId=SLEEPWELL", headers).1["studies"] as? [[String: Any]])?
                            .first?["status"] as? String == "Paused"
                    }

                    // An app update on A: B serves the new terms URL.
                    let updated = MetadataAdmin.demoApp.replacingOccurrences(of: "https://example.org/terms", with: "https://example.org/terms-v2")
                    #expect(try await helper.send(a, .put, "/admin/v1/apps/DEMOAPP", token: root, body: updated).0 == .ok)
                    try await eventually {
                        try await api.get(b, "/StudyMetaData/termsPolicy", headers).1["terms"] as? String == "https://example.org/terms-v2"
                    }

                    // B really serves from memory: a change behind the services' back is not seen
                    // until a notification says so. First B must have heard every notification
                    // so far (A hears them all too), or one still on its way from the app update
                    // would show the change early.
                    // A's count is read again each time: a notification may still arrive at both
                    // (a worker's later change), so B is compared with what A has heard by then.
                    let heard = try await TestSupport.eventually("B hearing every notification A heard") {
                        (a: try await catalogNotifications(a), b: try await catalogNotifications(b))
                    } until: { $0.a == $0.b }
                    #expect(heard.a >= 3, "the launch, the pause and the app update each notify")
                    // B's earlier read may have come before the app update's notification, which
                    // then emptied its cache: read once more, so B now holds the terms in memory.
                    #expect(try await api.get(b, "/StudyMetaData/termsPolicy", headers).1["terms"] as? String
                        == "https://example.org/terms-v2")
                    try await TestDatabase.withClient(url: url) { postgres, logger in
                        try await postgres.query(
                            "UPDATE apps SET definition = jsonb_set(definition, '{termsUrl}', '\"https://example.org/terms-v3\"')",
                            logger: logger)
                        // Read at once: without a notification nothing makes B look again (its copies
                        // expire only after minutes), so waiting first would add nothing.
                        #expect(try await api.get(b, "/StudyMetaData/termsPolicy", headers).1["terms"] as? String
                            == "https://example.org/terms-v2")
                        try await postgres.query("SELECT pg_notify('studystack_catalog', '')", logger: logger)
                    }
                    try await eventually {
                        try await api.get(b, "/StudyMetaData/termsPolicy", headers).1["terms"] as? String == "https://example.org/terms-v3"
                    }
                }
            }
        }
    }

    /// Polls `condition` for up to five seconds.
    func eventually(_ condition: () async throws -> Bool) async throws {
        try await TestSupport.eventually(
            "the other replica seeing the change", within: .seconds(5), poll: .milliseconds(50), condition, until: { $0 })
    }

    /// How many catalog change notifications a replica has heard (`/metrics`).
    func catalogNotifications(_ client: some TestClientProtocol) async throws -> Int {
        let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
        let prefix = "studystack_change_notifications_total{channel=\"\(CatalogCache.channel)\"} "
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Int(Double(line.dropFirst(prefix.count)) ?? 0)
    }

    @Test func aLoadThatRacesAnInvalidationIsNotKept() async throws {
        let cache = CatalogCache()
        cache.setListening(true)
        let app = AppDefinition(appId: "A", orgId: "O", name: "Old", kind: .gateway)
        // The invalidation lands while the load is in flight: the loaded (stale) value is not kept.
        _ = try await cache.app(id: "A") {
            cache.invalidateAll()
            return app
        }
        var loads = 0
        let fresh = try await cache.app(id: "A") {
            loads += 1
            return AppDefinition(appId: "A", orgId: "O", name: "New", kind: .gateway)
        }
        #expect(loads == 1)
        #expect(fresh?.name == "New")
        // Now it is kept, and a second read does not load.
        _ = try await cache.app(id: "A") {
            loads += 1
            return nil
        }
        #expect(loads == 1)
        // Not listening: nothing is cached.
        cache.setListening(false)
        _ = try await cache.app(id: "A") {
            loads += 1
            return app
        }
        #expect(loads == 2)
    }

    /// Credentials are kept by their header's bytes: a header that is the same text to Swift's
    /// `==` (a composed and a decomposed é) but other bytes is another credential, loaded anew.
    @Test func credentialsAreKeptByTheHeadersBytes() async throws {
        let cache = CatalogCache()
        cache.setListening(true)
        let credential = AppStore.Credential(appId: "A", platform: .ios, testing: false)
        let composed = "Basic caf\u{E9}"
        let decomposed = "Basic cafe\u{301}"
        #expect(composed == decomposed)
        var loads = 0
        for header in [composed, composed, decomposed, decomposed, composed + "\r\n"] {
            let found = try await cache.credential(header: header) {
                loads += 1
                return credential
            }
            #expect(found?.appId == "A")
        }
        #expect(loads == 3)
        // An unknown credential is not kept: each try reaches the loader.
        for _ in 0..<2 { _ = try await cache.credential(header: "Basic unknown") { loads += 1; return nil } }
        #expect(loads == 5)
    }
}
