/// Participant properties, resources, notifications and the dashboard of a study.

/// A fact about a participant kept by the response service, usable as an anchor date.
public struct ParticipantProperty: Codable, Sendable, Equatable {
    public enum Timing: String, Codable, Sendable {
        /// Known before enrollment (imported by the research team).
        case preEnrollment
        /// Filled in after enrollment.
        case postEnrollment
    }

    /// The LabKey participant-property types; `number` is kept as a synonym of `decimal`.
    public enum DataType: String, Codable, Sendable {
        case string, number, integer, decimal, date, time, boolean
    }

    public var key: String
    public var name: LocalizedText?
    public var timing: Timing
    public var dataType: DataType
    /// May anchor schedules (dates only).
    public var useAsAnchor: Bool?
    /// Where the value comes from (for example an external system's field name).
    public var dataSource: String?
    /// The value is refreshed on each study open.
    public var refresh: Bool?

    public init(
        key: String, name: LocalizedText? = nil, timing: Timing, dataType: DataType, useAsAnchor: Bool? = nil,
        dataSource: String? = nil, refresh: Bool? = nil
    ) {
        self.key = key
        self.name = name
        self.timing = timing
        self.dataType = dataType
        self.useAsAnchor = useAsAnchor
        self.dataSource = dataSource
        self.refresh = refresh
    }
}

/// A study resource: an HTML text or a PDF link, always or for a window.
public struct StudyResource: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case html, pdf
    }

    public var resourceId: String
    public var title: LocalizedText
    public var type: Kind
    /// The HTML text, or the PDF's URL.
    public var content: LocalizedText
    /// Absent: available to everyone for the whole study (`All`); present: a window (`Limited`).
    public var availability: ResourceAvailability?
    /// Pushed to participants when the resource becomes available.
    public var notificationText: LocalizedText?
    /// Marks the study protocol document.
    public var studyProtocol: Bool?

    public init(
        resourceId: String, title: LocalizedText, type: Kind, content: LocalizedText,
        availability: ResourceAvailability? = nil, notificationText: LocalizedText? = nil, studyProtocol: Bool? = nil
    ) {
        self.resourceId = resourceId
        self.title = title
        self.type = type
        self.content = content
        self.availability = availability
        self.notificationText = notificationText
        self.studyProtocol = studyProtocol
    }
}

/// When a resource is available: absolute dates, or days relative to an anchor.
public struct ResourceAvailability: Codable, Sendable, Equatable {
    public var anchor: Anchor?
    public var startDate: String?
    public var endDate: String?
    public var startDays: Int?
    public var endDays: Int?
    public var time: String?

    public init(
        anchor: Anchor? = nil, startDate: String? = nil, endDate: String? = nil, startDays: Int? = nil,
        endDays: Int? = nil, time: String? = nil
    ) {
        self.anchor = anchor
        self.startDate = startDate
        self.endDate = endDate
        self.startDays = startDays
        self.endDays = endDays
        self.time = time
    }
}

/// A push and in-app notification of a study.
public struct StudyNotification: Codable, Sendable, Equatable {
    public enum Subtype: String, Codable, Sendable {
        case announcement = "Announcement"
        case activity = "Activity"
        case resource = "Resource"
        case studyEvent
    }

    public enum Timing: String, Codable, Sendable {
        /// Sent when the study is published with it.
        case immediate
        /// Sent at `at` (local date-time in the study's time zone).
        case scheduled
        /// Sent `anchorDays` after each participant's anchor date, at `time`.
        case anchorRelative
    }

    public var notificationId: String
    public var subtype: Subtype
    public var text: LocalizedText
    public var title: LocalizedText?
    public var activityId: String?
    public var resourceId: String?
    public var timing: Timing
    public var at: String?
    public var anchor: Anchor?
    public var anchorDays: Int?
    public var time: String?

    public init(
        notificationId: String, subtype: Subtype, text: LocalizedText, title: LocalizedText? = nil,
        activityId: String? = nil, resourceId: String? = nil, timing: Timing, at: String? = nil,
        anchor: Anchor? = nil, anchorDays: Int? = nil, time: String? = nil
    ) {
        self.notificationId = notificationId
        self.subtype = subtype
        self.text = text
        self.title = title
        self.activityId = activityId
        self.resourceId = resourceId
        self.timing = timing
        self.at = at
        self.anchor = anchor
        self.anchorDays = anchorDays
        self.time = time
    }
}

/// The study dashboard: statistics and line charts computed on the device from the
/// participant's own answers. The server sends configuration only.
public struct Dashboard: Codable, Sendable, Equatable {
    public var statistics: [Statistic]
    public var charts: [Chart]

    public init(statistics: [Statistic] = [], charts: [Chart] = []) {
        self.statistics = statistics
        self.charts = charts
    }

    enum CodingKeys: String, CodingKey { case statistics, charts }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        statistics = try c.decodeIfPresent([Statistic].self, forKey: .statistics) ?? []
        charts = try c.decodeIfPresent([Chart].self, forKey: .charts) ?? []
    }
}

/// Where a dashboard item takes its numbers: a numeric question or an active task's result.
public struct DashboardSource: Codable, Sendable, Equatable {
    public var activityId: String
    /// The question's key, or the task result attribute.
    public var key: String
    /// The form holding the question, when it is in a form.
    public var formKey: String?

    public init(activityId: String, key: String, formKey: String? = nil) {
        self.activityId = activityId
        self.key = key
        self.formKey = formKey
    }
}

public struct Statistic: Codable, Sendable, Equatable {
    public enum Calculation: String, Codable, Sendable, CaseIterable {
        case summation = "Summation"
        case average = "Average"
        case maximum = "Maximum"
        case minimum = "Minimum"
    }

    /// Short name, unique in the dashboard.
    public var title: String
    public var displayName: LocalizedText
    /// Icon category: Activity, Sleep, Weight, Nutrition, Heart Rate, Blood Glucose, Active Task,
    /// Baby Kicks or Other.
    public var statType: String
    public var unit: LocalizedText
    public var calculation: Calculation
    public var dataSource: DashboardSource

    public init(
        title: String, displayName: LocalizedText, statType: String, unit: LocalizedText, calculation: Calculation,
        dataSource: DashboardSource
    ) {
        self.title = title
        self.displayName = displayName
        self.statType = statType
        self.unit = unit
        self.calculation = calculation
        self.dataSource = dataSource
    }
}

public struct Chart: Codable, Sendable, Equatable {
    public enum TimeRange: String, Codable, Sendable, CaseIterable {
        case daysOfWeek = "days_of_week"
        case daysOfMonth = "days_of_month"
        case weeksOfMonth = "weeks_of_month"
        case monthsOfYear = "months_of_year"
        case hoursOfDay = "hours_of_day"
        case runs
    }

    public var title: String
    public var displayName: LocalizedText
    public var timeRangeType: TimeRange
    /// The participant may step back through earlier periods.
    public var scrollable: Bool?
    public var dataSource: DashboardSource
    /// Line-chart display settings passed to the apps as they are (gridlines, colours, ...).
    public var configuration: JSONValue?

    public init(
        title: String, displayName: LocalizedText, timeRangeType: TimeRange, scrollable: Bool? = nil,
        dataSource: DashboardSource, configuration: JSONValue? = nil
    ) {
        self.title = title
        self.displayName = displayName
        self.timeRangeType = timeRangeType
        self.scrollable = scrollable
        self.dataSource = dataSource
        self.configuration = configuration
    }
}
