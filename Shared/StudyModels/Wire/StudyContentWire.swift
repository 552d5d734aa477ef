/// Replies of `termsPolicy`, `studyInfo`, `resources` and `studyDashboard`.

public struct TermsPolicyReply: Codable, Sendable, Equatable {
    public var message = "SUCCESS"
    public var terms: String
    public var privacy: String

    public init(terms: String, privacy: String) {
        self.terms = terms
        self.privacy = privacy
    }
}

public struct StudyInfoReply: Codable, Sendable, Equatable {
    public struct Page: Codable, Sendable, Equatable {
        /// `video` for a page with a video (the first only), `image` otherwise.
        public var type: String
        public var image: String
        public var title: String
        public var text: String
        public var videoLink: String

        public init(type: String, image: String, title: String, text: String, videoLink: String) {
            self.type = type
            self.image = image
            self.title = title
            self.text = text
            self.videoLink = videoLink
        }
    }

    public struct WithdrawalConfig: Codable, Sendable, Equatable {
        /// `no_action`, `delete_data` or `ask_user`.
        public var type: String
        public var message: String

        public init(type: String, message: String) {
            self.type = type
            self.message = message
        }
    }

    public var message = "SUCCESS"
    public var studyWebsite: String
    public var info: [Page]
    public var withdrawalConfig: WithdrawalConfig

    public init(studyWebsite: String, info: [Page], withdrawalConfig: WithdrawalConfig) {
        self.studyWebsite = studyWebsite
        self.info = info
        self.withdrawalConfig = withdrawalConfig
    }
}

public struct ResourcesReply: Codable, Sendable, Equatable {
    public struct Availability: Codable, Sendable, Equatable {
        /// `Regular` or `AnchorDate`.
        public var availabilityType: String
        public var availableDate: String
        public var expiryDate: String
        public var startDays: Int?
        public var endDays: Int?
        public var sourceType: String?
        public var sourceActivityId: String?
        public var sourceKey: String?
        public var sourceFormKey: String?
        public var startTime: String
        public var endTime: String

        public init(
            availabilityType: String, availableDate: String, expiryDate: String, startDays: Int?, endDays: Int?,
            sourceType: String?, sourceActivityId: String?, sourceKey: String?, sourceFormKey: String?, startTime: String,
            endTime: String
        ) {
            self.availabilityType = availabilityType
            self.availableDate = availableDate
            self.expiryDate = expiryDate
            self.startDays = startDays
            self.endDays = endDays
            self.sourceType = sourceType
            self.sourceActivityId = sourceActivityId
            self.sourceKey = sourceKey
            self.sourceFormKey = sourceFormKey
            self.startTime = startTime
            self.endTime = endTime
        }
    }

    public struct Resource: Codable, Sendable, Equatable {
        public var resourcesId: String
        public var title: String
        /// `text` (HTML) or `pdf`.
        public var type: String
        public var content: String
        /// `All` (always available) or `Limited` (a window).
        public var audience: String
        public var notificationText: String
        public var availability: Availability?

        public init(
            resourcesId: String, title: String, type: String, content: String, audience: String, notificationText: String,
            availability: Availability?
        ) {
            self.resourcesId = resourcesId
            self.title = title
            self.type = type
            self.content = content
            self.audience = audience
            self.notificationText = notificationText
            self.availability = availability
        }
    }

    public var message = "SUCCESS"
    public var resources: [Resource]

    public init(resources: [Resource]) {
        self.resources = resources
    }
}

public struct DashboardReply: Codable, Sendable, Equatable {
    public struct ActivityReference: Codable, Sendable, Equatable {
        public var activityId: String
        public var version: String

        public init(activityId: String, version: String) {
            self.activityId = activityId
            self.version = version
        }
    }

    public struct DataSource: Codable, Sendable, Equatable {
        /// `questionnaire` or `task`.
        public var type: String
        public var key: String
        public var activity: ActivityReference
        public var timeRangeType: String?
        public var startTime: String?
        public var endTime: String?

        public init(
            type: String, key: String, activity: ActivityReference, timeRangeType: String? = nil, startTime: String? = nil,
            endTime: String? = nil
        ) {
            self.type = type
            self.key = key
            self.activity = activity
            self.timeRangeType = timeRangeType
            self.startTime = startTime
            self.endTime = endTime
        }
    }

    public struct Statistic: Codable, Sendable, Equatable {
        public var title: String
        public var displayName: String
        public var statType: String
        public var unit: String
        public var calculation: String
        public var dataSource: DataSource

        public init(title: String, displayName: String, statType: String, unit: String, calculation: String, dataSource: DataSource) {
            self.title = title
            self.displayName = displayName
            self.statType = statType
            self.unit = unit
            self.calculation = calculation
            self.dataSource = dataSource
        }
    }

    public struct Chart: Codable, Sendable, Equatable {
        public var title: String
        public var displayName: String
        /// Always `line-chart`, the only type the originals served.
        public var type: String
        public var configuration: JSONValue
        public var scrollable: Bool
        public var dataSource: DataSource

        public init(
            title: String, displayName: String, type: String, configuration: JSONValue, scrollable: Bool, dataSource: DataSource
        ) {
            self.title = title
            self.displayName = displayName
            self.type = type
            self.configuration = configuration
            self.scrollable = scrollable
            self.dataSource = dataSource
        }
    }

    public struct Content: Codable, Sendable, Equatable {
        public var statistics: [Statistic]
        public var charts: [Chart]

        public init(statistics: [Statistic], charts: [Chart]) {
            self.statistics = statistics
            self.charts = charts
        }
    }

    public var message = "SUCCESS"
    public var dashboard: Content

    public init(dashboard: Content) {
        self.dashboard = dashboard
    }
}
