import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// The study API the MyStudies apps call, `/StudyMetaData/<name>` (the original WCP server's),
/// wire-compatible with the apps.
/// Errors carry the `status`, `title` and `StatusMessage` headers (the service's error format for
/// this path). Only published versions are served.
package struct WCPRoutes {
    package struct Ping: ResponseEncodable { var message = "SUCCESS" }

    package let published: PublishedStudies
    package let apps: AppStore
    package let notificationStore: NotificationStore
    package let authenticator: AppClientAuthenticator

    package init(
        published: PublishedStudies, apps: AppStore, notificationStore: NotificationStore,
        authenticator: AppClientAuthenticator
    ) {
        self.published = published
        self.apps = apps
        self.notificationStore = notificationStore
        self.authenticator = authenticator
    }

    package static let invalidInput = APIError(
        .badRequest, code: "invalid_request", message: "Invalid input.", statusMessageCode: .invalidInput)
    package static let noStudy = APIError(.notFound, code: "not_found", message: "Study not found.", statusMessageCode: .noData)
    package static let noData = APIError(.notFound, code: "not_found", message: "No data available.", statusMessageCode: .noData)

    package func add(to router: Router<ServiceRequestContext>) {
        let fromApps = authenticator.routes(router)
        router.get("/StudyMetaData/ping") { _, _ in Ping() }
        fromApps.get("/StudyMetaData/versionInfo", use: versionInfo)
        fromApps.get("/StudyMetaData/studyList", use: studyList)
        fromApps.get("/StudyMetaData/study", use: study)
        fromApps.get("/StudyMetaData/activity", use: activity)
        fromApps.get("/StudyMetaData/activityList", use: cachedActivityList)
        fromApps.get("/StudyMetaData/studyUpdates", use: studyUpdates)
        fromApps.get("/StudyMetaData/termsPolicy", use: termsPolicy)
        fromApps.get("/StudyMetaData/studyInfo", use: studyInfo)
        fromApps.get("/StudyMetaData/resources", use: resources)
        fromApps.get("/StudyMetaData/studyDashboard", use: studyDashboard)
        fromApps.get("/StudyMetaData/eligibilityConsent", use: eligibilityConsent)
        fromApps.get("/StudyMetaData/consentDocument", use: consentDocument)
        fromApps.get("/StudyMetaData/notifications", use: notifications)
        fromApps.get("/StudyMetaData/appUpdates", use: appUpdates)
        fromApps.get("/StudyMetaData/gatewayInfo", use: gatewayInfo)
        fromApps.get("/StudyMetaData/participantProperties", use: participantProperties)
    }

    @Sendable package func versionInfo(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> VersionInfoReply {
        guard let app = try await apps.app(id: client.appId) else { throw Self.invalidInput }
        func platform(_ release: AppDefinition.Release?) -> VersionInfoReply.Platform {
            .init(latestVersion: release?.latestVersion ?? "1.0", forceUpdate: release?.forceUpdate ?? false)
        }
        return VersionInfoReply(ios: platform(app.ios), android: platform(app.android))
    }

    @Sendable package func studyList(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> StudyListReply {
        // The apps always send both headers here; the original answered 400 without them.
        guard let orgId = request.headers[.orgId],
            request.headers[.applicationId] != nil,
            let app = try await apps.app(id: client.appId), app.orgId == orgId
        else { throw Self.invalidInput }
        return StudyListReply(studies: try await listItems(for: client))
    }

    @Sendable package func study(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> StudyListReply {
        let studyId = try Self.required("studyId", client)
        let items = try await listItems(for: client, studyId: studyId)
        guard !items.isEmpty else { throw Self.noStudy }
        return StudyListReply(studies: items)
    }

    /// The design of one activity version: rendered once per (version, platform, language).
    @Sendable package func activity(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> Response {
        let studyId = try Self.required("studyId", client)
        let activityId = try Self.required("activityId", client)
        guard let current = try await visible(studyId, to: client), current.status != .upcoming else { throw Self.noStudy }
        var version = current.version
        var activityVersion = current.activityVersions[activityId]
        if let label = client.string("activityVersion"), !label.isEmpty {
            guard StudyActivity.isValidVersionLabel(label) else { throw Self.invalidInput }
            guard let (found, requested) = try await published.version(studyId: studyId, activityId: activityId, label: label)
            else { throw Self.noStudy }
            version = found
            activityVersion = requested
        }
        guard let activityVersion else { throw Self.noStudy }
        let key = [
            "activity", studyId, String(version), activityId, String(activityVersion), client.platform.rawValue,
            client.language ?? "",
        ].joined(separator: "|")
        let body = try await published.replies.reply(key) {
            let reply = try await renderActivity(
                studyId: studyId, activityId: activityId, version: version, activityVersion: activityVersion, client: client)
            return ByteBuffer(bytes: try JSONEncoder().encode(reply))
        }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    private func renderActivity(
        studyId: String, activityId: String, version: Int, activityVersion: Int, client: AppClient
    ) async throws -> ActivityReply {
        let document = try await published.document(studyId: studyId, version: version)
        guard let studyActivity = document.activities.first(where: { $0.activityId == activityId }),
            Self.isOffered(studyActivity, on: client.platform)
        else { throw Self.noStudy }
        return ActivityReply(
            activity: ActivityDesign(studyActivity, in: document, activityVersion: activityVersion)
                .served(language: client.language))
    }

    /// `activityList` depends only on the current frozen version (and its history, launch time,
    /// platform and language), so its encoded reply is cached by those.
    @Sendable package func cachedActivityList(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> Response {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client) else { throw Self.noStudy }
        let key = [
            "activityList", studyId, String(current.version), current.status.rawValue, client.platform.rawValue,
            client.language ?? "", current.launchedAt.map { String($0.timeIntervalSince1970) } ?? "",
        ].joined(separator: "|")
        let body = try await published.replies.reply(key) {
            ByteBuffer(bytes: try JSONEncoder().encode(try await activityList(current, studyId: studyId, client: client)))
        }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    package func activityList(
        _ current: PublishedStudies.Current, studyId: String, client: AppClient
    ) async throws -> ActivityListReply {
        let document = current.document
        let name = document.name.text(for: client.language)
        // An upcoming study is listed, but serves no activities yet.
        guard current.status != .upcoming,
            let listing = ActivityListing(zoneName: document.timeZone, launchedAt: current.launchedAt, language: client.language)
        else { return ActivityListReply(studyName: name, activities: []) }

        let history = try await published.history(studyId: studyId)
        var items: [ActivityListItem] = []
        for activity in document.activities where Self.isOffered(activity, on: client.platform) {
            let version = current.activityVersions[activity.activityId] ?? 1
            // Last modified: when this activity version was first published.
            let since = history.first { $0.activityVersions[activity.activityId] == version }?.publishedAt ?? Date()
            items.append(listing.item(for: activity, version: version, lastModified: since))
        }
        // Activities removed by an update stay listed as deleted, so the apps retire them.
        for stamp in history {
            for (activityId, version) in stamp.activityVersions
            where current.activityVersions[activityId] == nil && !items.contains(where: { $0.activityId == activityId }) {
                guard let lastVersion = history.last(where: { $0.activityVersions[activityId] != nil }),
                    let removal = history.first(where: { $0.version > lastVersion.version }),
                    let removed = try await published.document(studyId: studyId, version: lastVersion.version)
                        .activities.first(where: { $0.activityId == activityId }),
                    Self.isOffered(removed, on: client.platform)
                else { continue }
                items.append(listing.item(
                    for: removed, version: lastVersion.activityVersions[activityId] ?? version,
                    lastModified: lastVersion.publishedAt, deletedAt: removal.publishedAt))
            }
        }
        return ActivityListReply(studyName: name, activities: items)
    }

    @Sendable package func studyUpdates(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> StudyUpdatesReply {
        let studyId = try Self.required("studyId", client)
        let label = try Self.required("studyVersion", client)
        guard let current = try await visible(studyId, to: client), let status = current.status.wireName else {
            throw Self.noStudy
        }
        guard let held = try await published.version(studyId: studyId, studyLabel: label) else { throw Self.invalidInput }
        let changes = try await published.changes(studyId: studyId, after: held.version)
        // The apps take a consent update as "sign again" (the 2020 apps always, 2.x where
        // `enrollAgain` says so): a consent change published without re-consent is not one for a
        // participant who signed; a new participant signs the current consent when joining.
        return StudyUpdatesReply(
            updates: .init(
                consent: changes.reconsent, activities: changes.activities, resources: changes.resources,
                info: changes.info, status: status),
            currentVersion: VersionCounters.studyLabel(of: current.document, version: current.version),
            enrollAgain: changes.reconsent)
    }

    // MARK: - Helpers

    /// The study if it is published in the client's app and offered on its platform.
    package func visible(_ studyId: String, to client: AppClient) async throws -> PublishedStudies.Current? {
        try await published.current(appId: client.appId, testing: client.testing, studyId: studyId)
            .first { $0.document.platforms.contains(client.platform) }
    }

    private func listItems(for client: AppClient, studyId: String? = nil) async throws -> [StudyListItem] {
        try await published.current(appId: client.appId, testing: client.testing, studyId: studyId)
            .filter { $0.document.platforms.contains(client.platform) }
            .compactMap { study in
                guard let status = study.status.wireName else { return nil }
                let document = study.document
                let language = client.language.flatMap { document.languages.contains($0) ? $0 : nil } ?? "en"
                func text(_ value: LocalizedText?) -> String { value?.text(for: client.language) ?? "" }
                return StudyListItem(
                    studyId: study.studyId, studyVersion: VersionCounters.studyLabel(of: document, version: study.version),
                    studyLanguage: language,
                    title: text(document.name), category: text(document.category), sponsorName: text(document.sponsor),
                    tagline: text(document.tagline), status: status, logo: document.logo ?? "",
                    settings: .init(
                        enrolling: document.enrolling,
                        platform: document.platforms.count == Platform.allCases.count ? "all" : document.platforms[0].rawValue,
                        rejoin: document.rejoin.allowed))
            }
    }

    /// Active tasks other than the fetal kick counter are not offered to Android.
    /// Whether the MyStudies app on `platform` is sent the activity: not a Sage assessment the
    /// apps cannot run (docs/sage.md), and on Android no active task it lacks.
    package static func isOffered(_ activity: StudyActivity, on platform: Platform) -> Bool {
        guard activity.assessment?.isSageOnly != true else { return false }
        return platform == .ios || activity.steps.allSatisfy { $0.taskType?.isAvailableOnAndroid ?? true }
    }

    package static func required(_ name: String, _ client: AppClient) throws -> String {
        guard let value = client.string(name), !value.isEmpty else {
            throw invalidInput
        }
        return value
    }
}

extension StudyListReply: ResponseEncodable {}
extension VersionInfoReply: ResponseEncodable {}
extension StudyUpdatesReply: ResponseEncodable {}
