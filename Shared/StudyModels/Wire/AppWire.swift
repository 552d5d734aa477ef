/// Replies of `notifications`, `appUpdates`, `gatewayInfo` and `participantProperties`.

public struct NotificationsReply: Codable, Sendable, Equatable {
    public struct Item: Codable, Sendable, Equatable {
        public var notificationId: String
        /// `Gateway` or `Study` (the apps force-cast it to an enum).
        public var type: String
        /// `Announcement`, `Activity`, `Resource`, `Study` or `studyEvent`.
        public var subtype: String
        /// `All` (every participant) or `Limited`.
        public var audience: String
        public var title: String
        public var message: String
        public var studyId: String
        public var activityId: String
        public var resourceId: String
        /// When it was sent, `yyyy-MM-dd'T'HH:mm:ss.SSSZ` with the study's offset (UTC for app-wide ones).
        public var date: String

        public init(
            notificationId: String, type: String, subtype: String, audience: String, title: String, message: String,
            studyId: String, activityId: String, resourceId: String, date: String
        ) {
            self.notificationId = notificationId
            self.type = type
            self.subtype = subtype
            self.audience = audience
            self.title = title
            self.message = message
            self.studyId = studyId
            self.activityId = activityId
            self.resourceId = resourceId
            self.date = date
        }
    }

    public var message = "SUCCESS"
    public var notifications: [Item]

    public init(notifications: [Item]) { self.notifications = notifications }
}

public struct AppUpdatesReply: Codable, Sendable, Equatable {
    /// The latest version on the caller's platform.
    public var currentVersion: String
    /// Whether the calling version must update before use.
    public var forceUpdate: Bool
    /// The release's message to show (empty when none).
    public var message: String

    public init(currentVersion: String, forceUpdate: Bool, message: String) {
        self.currentVersion = currentVersion
        self.forceUpdate = forceUpdate
        self.message = message
    }
}

public struct GatewayInfoReply: Codable, Sendable, Equatable {
    public struct Resource: Codable, Sendable, Equatable {
        public var resourcesId: String
        public var title: String
        /// `html` or `pdf`.
        public var type: String
        public var content: String

        public init(resourcesId: String, title: String, type: String, content: String) {
            self.resourcesId = resourcesId
            self.title = title
            self.type = type
            self.content = content
        }
    }

    public var message = "SUCCESS"
    public var info: [StudyInfoReply.Page]
    public var resources: [Resource]

    public init(info: [StudyInfoReply.Page], resources: [Resource]) {
        self.info = info
        self.resources = resources
    }
}

/// The LabKey WCP's `participantProperties` reply.
public struct ParticipantPropertiesReply: Codable, Sendable, Equatable {
    public struct Metadata: Codable, Sendable, Equatable {
        public var studyId: String
        public var studyVersion: String

        public init(studyId: String, studyVersion: String) {
            self.studyId = studyId
            self.studyVersion = studyVersion
        }
    }

    public struct Property: Codable, Sendable, Equatable {
        public var propertyId: String
        public var propertyName: String
        /// `preenrollment` or `postenrollment`.
        public var propertyType: String
        /// `boolean`, `date`, `integer`, `decimal`, `string` or `time`.
        public var propertyDataType: String
        public var shouldRefresh: Bool
        public var dataSource: String
        public var status: String
        public var version: String

        public init(
            propertyId: String, propertyName: String, propertyType: String, propertyDataType: String,
            shouldRefresh: Bool, dataSource: String, status: String, version: String
        ) {
            self.propertyId = propertyId
            self.propertyName = propertyName
            self.propertyType = propertyType
            self.propertyDataType = propertyDataType
            self.shouldRefresh = shouldRefresh
            self.dataSource = dataSource
            self.status = status
            self.version = version
        }
    }

    public var message = "SUCCESS"
    public var metadata: Metadata
    public var participantProperties: [Property]

    public init(metadata: Metadata, participantProperties: [Property]) {
        self.metadata = metadata
        self.participantProperties = participantProperties
    }
}

extension ParticipantProperty {
    /// The LabKey data type name (`number` is stored as `decimal`).
    public var wireDataType: String {
        switch dataType {
        case .number: "decimal"
        default: dataType.rawValue
        }
    }
}
