/// `activityList`: what the apps schedule from (docs/app-api.md).
public struct ActivityListReply: Codable, Sendable, Equatable {
    public var message = "SUCCESS"
    public var studyName: String
    public var activities: [ActivityListItem]

    public init(studyName: String, activities: [ActivityListItem]) {
        self.studyName = studyName
        self.activities = activities
    }
}

public struct ActivityListItem: Codable, Sendable, Equatable {
    public struct Run: Codable, Sendable, Equatable {
        public var startTime: String
        public var endTime: String

        public init(startTime: String, endTime: String) {
            self.startTime = startTime
            self.endTime = endTime
        }
    }

    public struct AnchorRun: Codable, Sendable, Equatable {
        public var startDays: Int
        public var endDays: Int
        public var time: String

        public init(startDays: Int, endDays: Int, time: String) {
            self.startDays = startDays
            self.endDays = endDays
            self.time = time
        }
    }

    public struct Frequency: Codable, Sendable, Equatable {
        /// `One time`, `Daily`, `Weekly`, `Monthly`, `Manually Schedule` or `Ongoing`.
        public var type: String
        public var addNewRuns: Bool
        public var runs: [Run]
        public var anchorRuns: [AnchorRun]

        public init(type: String, addNewRuns: Bool, runs: [Run], anchorRuns: [AnchorRun]) {
            self.type = type
            self.addNewRuns = addNewRuns
            self.runs = runs
            self.anchorRuns = anchorRuns
        }
    }

    public struct AnchorDate: Codable, Sendable, Equatable {
        public struct Start: Codable, Sendable, Equatable {
            public var anchorDays: Int
            public var dayOfWeek: Int?
            public var dateOfMonth: Int?
            public var time: String

            public init(anchorDays: Int, dayOfWeek: Int?, dateOfMonth: Int?, time: String) {
                self.anchorDays = anchorDays
                self.dayOfWeek = dayOfWeek
                self.dateOfMonth = dateOfMonth
                self.time = time
            }
        }

        public struct End: Codable, Sendable, Equatable {
            public var anchorDays: Int?
            public var repeatInterval: Int?
            public var time: String

            public init(anchorDays: Int?, repeatInterval: Int?, time: String) {
                self.anchorDays = anchorDays
                self.repeatInterval = repeatInterval
                self.time = time
            }
        }

        public struct PropertyMetadata: Codable, Sendable, Equatable {
            public var propertyId: String
            public var shouldRefresh: Bool
            public var dataSource: String

            public init(propertyId: String, shouldRefresh: Bool, dataSource: String) {
                self.propertyId = propertyId
                self.shouldRefresh = shouldRefresh
                self.dataSource = dataSource
            }
        }

        /// `EnrollmentDate`, `ActivityResponse` or `ParticipantProperty`.
        public var sourceType: String
        public var sourceActivityId: String?
        public var sourceKey: String?
        public var sourceFormKey: String?
        public var propertyMetadata: PropertyMetadata?
        public var start: Start?
        public var end: End?

        public init(
            sourceType: String, sourceActivityId: String? = nil, sourceKey: String? = nil, sourceFormKey: String? = nil,
            propertyMetadata: PropertyMetadata? = nil, start: Start? = nil, end: End? = nil
        ) {
            self.sourceType = sourceType
            self.sourceActivityId = sourceActivityId
            self.sourceKey = sourceKey
            self.sourceFormKey = sourceFormKey
            self.propertyMetadata = propertyMetadata
            self.start = start
            self.end = end
        }
    }

    public var activityId: String
    public var activityVersion: String
    public var title: String
    /// `questionnaire` or `task`.
    public var type: String
    /// The task type for tasks, empty otherwise.
    public var taskSubType: String
    public var branching: Bool
    public var lastModified: String
    /// `active`, or `deleted` for an activity removed by an update (its `endTime` is the removal).
    public var state: String
    public var startTime: String
    public var endTime: String
    /// `Regular` or `AnchorDate`.
    public var schedulingType: String
    public var anchorDate: AnchorDate?
    public var frequency: Frequency

    public init(
        activityId: String, activityVersion: String, title: String, type: String, taskSubType: String, branching: Bool,
        lastModified: String, state: String, startTime: String, endTime: String, schedulingType: String,
        anchorDate: AnchorDate?, frequency: Frequency
    ) {
        self.activityId = activityId
        self.activityVersion = activityVersion
        self.title = title
        self.type = type
        self.taskSubType = taskSubType
        self.branching = branching
        self.lastModified = lastModified
        self.state = state
        self.startTime = startTime
        self.endTime = endTime
        self.schedulingType = schedulingType
        self.anchorDate = anchorDate
        self.frequency = frequency
    }
}
