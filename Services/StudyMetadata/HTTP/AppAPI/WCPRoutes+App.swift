import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `notifications`, `appUpdates`, `gatewayInfo` and `participantProperties`.
extension WCPRoutes {
    /// The apps page through notifications 20 at a time (`skip`).
    package static let notificationPage = 20

    /// Notifications sent to the app's users, newest first. Study notifications are listed only
    /// when the study is offered on the caller's platform.
    @Sendable package func notifications(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> NotificationsReply {
        let skipText = client.string("skip") ?? "0"
        guard let skip = Int(skipText), skip >= 0, skip <= 1_000_000 else { throw Self.invalidInput }
        let studies = Dictionary(
            try await published.current(appId: client.appId, testing: client.testing).map { ($0.studyId, $0.document) },
            uniquingKeysWith: { first, _ in first })
        // Over-read a little so that a page filtered by platform is still full.
        let records = try await notificationStore.sent(appId: client.appId, skip: skip, limit: Self.notificationPage * 2)
        var items: [NotificationsReply.Item] = []
        for record in records where items.count < Self.notificationPage {
            var zone = TimeZone.gmt
            if let studyId = record.studyId {
                guard let document = studies[studyId], document.platforms.contains(client.platform) else { continue }
                zone = TimeZone(identifier: document.timeZone) ?? .gmt
            }
            items.append(NotificationsReply.Item(
                notificationId: record.notificationId, type: record.type.rawValue, subtype: record.subtype,
                audience: "All", title: record.title?.text(for: client.language) ?? "",
                message: record.message.text(for: client.language), studyId: record.studyId ?? "",
                activityId: record.activityId ?? "", resourceId: record.resourceId ?? "",
                date: WireDates.format(record.sentAt ?? record.dueAt, in: zone)))
        }
        return NotificationsReply(notifications: items)
    }

    /// Whether the calling app version must update (the 2018 apps' check). Versions are compared
    /// number by number, so 1.10 is newer than 1.9.
    @Sendable package func appUpdates(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> AppUpdatesReply {
        guard let running = AppVersion(try Self.required("appVersion", client)) else { throw Self.invalidInput }
        guard let app = try await apps.app(id: client.appId) else { throw Self.invalidInput }
        let release = client.platform == .ios ? app.ios : app.android
        guard let release, let latest = AppVersion(release.latestVersion) else {
            return AppUpdatesReply(currentVersion: running.description, forceUpdate: false, message: "")
        }
        return AppUpdatesReply(
            currentVersion: release.latestVersion, forceUpdate: release.forceUpdate && running < latest,
            message: running < latest ? release.message?.text(for: client.language) ?? "" : "")
    }

    /// The gateway app's home carousel and general resources.
    @Sendable package func gatewayInfo(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> GatewayInfoReply {
        guard let app = try await apps.app(id: client.appId) else { throw Self.invalidInput }
        guard let content = app.gateway else { throw Self.noData }
        let language = client.language
        return GatewayInfoReply(
            info: content.info.map { page in
                .init(
                    type: page.videoUrl == nil ? "image" : "video", image: page.image ?? "",
                    title: page.title.text(for: language), text: page.text.text(for: language), videoLink: page.videoUrl ?? "")
            },
            resources: content.resources.map { resource in
                .init(
                    resourcesId: resource.resourceId, title: resource.title.text(for: language), type: resource.type.rawValue,
                    content: resource.content.text(for: language))
            })
    }

    /// The study's participant properties (the LabKey WCP endpoint), at the current version or at
    /// `studyVersion` when given.
    @Sendable package func participantProperties(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> ParticipantPropertiesReply {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client) else { throw Self.noStudy }
        var version = current.version
        if let label = client.string("studyVersion"), !label.isEmpty {
            guard let requested = try await published.version(studyId: studyId, studyLabel: label),
                requested.version <= current.version
            else { throw Self.noStudy }
            version = requested.version
        }
        let document = try await published.document(studyId: studyId, version: version)
        return ParticipantPropertiesReply(
            metadata: .init(studyId: studyId, studyVersion: VersionCounters.studyLabel(of: document, version: version)),
            participantProperties: document.participantProperties.map { property in
                .init(
                    propertyId: property.key, propertyName: property.name?.text(for: client.language) ?? property.key,
                    propertyType: property.timing == .preEnrollment ? "preenrollment" : "postenrollment",
                    propertyDataType: property.wireDataType, shouldRefresh: property.refresh ?? false,
                    dataSource: property.dataSource ?? "", status: "active", version: "1.0")
            })
    }
}

extension NotificationsReply: ResponseEncodable {}
extension AppUpdatesReply: ResponseEncodable {}
extension GatewayInfoReply: ResponseEncodable {}
extension ParticipantPropertiesReply: ResponseEncodable {}
