import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `termsPolicy`, `studyInfo`, `resources` and `studyDashboard`: direct renderings of the app
/// definition and of the current frozen study version.
extension WCPRoutes {
    @Sendable package func termsPolicy(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> TermsPolicyReply {
        guard let app = try await apps.app(id: client.appId) else { throw Self.invalidInput }
        return TermsPolicyReply(terms: app.termsUrl ?? "", privacy: app.privacyUrl ?? "")
    }

    /// The overview carousel and withdrawal settings; served for upcoming studies too.
    @Sendable package func studyInfo(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> StudyInfoReply {
        let studyId = try Self.required("studyId", client)
        guard let document = try await visible(studyId, to: client)?.document else { throw Self.noStudy }
        let language = client.language
        return StudyInfoReply(
            studyWebsite: document.website ?? "",
            info: document.overview.map { page in
                .init(
                    type: page.videoUrl == nil ? "image" : "video", image: page.image ?? "",
                    title: page.title.text(for: language), text: page.text.text(for: language), videoLink: page.videoUrl ?? "")
            },
            withdrawalConfig: .init(
                type: document.withdrawal.type.rawValue, message: document.withdrawal.message?.text(for: language) ?? ""))
    }

    /// Resources of a launched study (none for an upcoming one).
    @Sendable package func resources(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> ResourcesReply {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client) else { throw Self.noStudy }
        guard current.status != .upcoming else { return ResourcesReply(resources: []) }
        let document = current.document
        let language = client.language
        return ResourcesReply(resources: document.resources.map { resource in
            ResourcesReply.Resource(
                resourcesId: resource.resourceId, title: resource.title.text(for: language),
                type: resource.type == .html ? "text" : "pdf", content: resource.content.text(for: language),
                audience: resource.availability == nil ? "All" : "Limited",
                notificationText: resource.notificationText?.text(for: language) ?? "",
                availability: resource.availability.map { Self.availability($0, timeZone: document.timeZone) })
        })
    }

    package static func availability(_ window: ResourceAvailability, timeZone: String) -> ResourcesReply.Availability {
        let anchor = window.anchor
        let time = ActivityListing.clock(window.time ?? "00:00")
        return ResourcesReply.Availability(
            availabilityType: anchor == nil ? "Regular" : "AnchorDate",
            availableDate: window.startDate.flatMap { WireDates.format(date: $0, time: window.time, in: timeZone) } ?? "",
            expiryDate: window.endDate.flatMap { WireDates.format(date: $0, time: "23:59:59", in: timeZone) } ?? "",
            startDays: window.startDays, endDays: window.endDays,
            sourceType: anchor?.source.wireName,
            sourceActivityId: anchor?.activityId, sourceKey: anchor?.key ?? anchor?.propertyKey,
            sourceFormKey: anchor?.formKey, startTime: anchor == nil ? "" : time, endTime: anchor == nil ? "" : "23:59:59")
    }

    /// Dashboard configuration; the values are computed on the device from the participant's answers.
    @Sendable package func studyDashboard(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> DashboardReply {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client) else { throw Self.noStudy }
        guard current.status != .upcoming else { return DashboardReply(dashboard: .init(statistics: [], charts: [])) }
        let document = current.document
        let language = client.language
        func source(_ dataSource: DashboardSource, timeRange: String? = nil) -> DashboardReply.DataSource? {
            guard let activity = document.activities.first(where: { $0.activityId == dataSource.activityId }),
                Self.isOffered(activity, on: client.platform)
            else { return nil }
            let version = VersionCounters.label(of: activity, version: current.activityVersions[activity.activityId] ?? 1)
            // A question inside a form is addressed as form key and question key, as the originals did.
            let key = dataSource.formKey.map { "\($0).\(dataSource.key)" } ?? dataSource.key
            return .init(
                type: activity.kind.rawValue, key: key, activity: .init(activityId: activity.activityId, version: version),
                timeRangeType: timeRange, startTime: timeRange == nil ? nil : "", endTime: timeRange == nil ? nil : "")
        }
        let statistics = document.dashboard.statistics.compactMap { statistic -> DashboardReply.Statistic? in
            guard let dataSource = source(statistic.dataSource) else { return nil }
            return .init(
                title: statistic.title, displayName: statistic.displayName.text(for: language), statType: statistic.statType,
                unit: statistic.unit.text(for: language), calculation: statistic.calculation.rawValue, dataSource: dataSource)
        }
        let charts = document.dashboard.charts.compactMap { chart -> DashboardReply.Chart? in
            guard let dataSource = source(chart.dataSource, timeRange: chart.timeRangeType.rawValue) else { return nil }
            return .init(
                title: chart.title, displayName: chart.displayName.text(for: language), type: "line-chart",
                configuration: chart.configuration ?? Self.defaultChartConfiguration, scrollable: chart.scrollable ?? false,
                dataSource: dataSource)
        }
        return DashboardReply(dashboard: .init(statistics: statistics, charts: charts))
    }

    /// The line-chart settings the original builder wrote when a researcher set none.
    package static let defaultChartConfiguration: JSONValue = .object([
        "subType": .string("single"), "gridlines": .bool(false), "animated": .bool(false), "scaling": .number(0),
        "axisColor": .string("#000000"), "max": .number(0), "min": .number(0), "titles": .array([]),
        "defaultText": .string(""), "settings": .array([]),
    ])
}

extension TermsPolicyReply: ResponseEncodable {}
extension StudyInfoReply: ResponseEncodable {}
extension ResourcesReply: ResponseEncodable {}
extension DashboardReply: ResponseEncodable {}
