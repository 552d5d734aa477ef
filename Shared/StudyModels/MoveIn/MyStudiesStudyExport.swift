import JSONText

/// What was read from a MyStudies deployment's study-metadata API (the one its apps read, which
/// the LabKey-era WCP, MyStudies 2.x's study datastore and StudyStack all serve): every reply of
/// every study of one app, kept as it came, so that what is imported can be checked against what
/// the source said and the reading repeated without asking the source again.
///
/// `studystack-import studies` writes one from a running deployment; the import reads it
/// (docs/moving-in.md).
public struct MyStudiesStudyExport: Codable, Sendable, Equatable {
    /// The study-metadata base URL the replies came from.
    public var source: String
    /// When they were read (RFC 3339).
    public var readAt: String
    public var studies: [Study]

    public init(source: String, readAt: String, studies: [Study]) {
        self.source = source
        self.readAt = readAt
        self.studies = studies
    }

    /// One study's replies.
    public struct Study: Codable, Sendable, Equatable {
        /// The study's entry in `studyList`.
        public var listing: JSONValue
        public var studyInfo: JSONValue?
        public var eligibilityConsent: JSONValue?
        /// `consentDocument` for the current consent.
        public var consentDocument: JSONValue?
        public var activityList: JSONValue?
        /// Each activity at each version asked for: the current versions `activityList` names, and
        /// the earlier ones the participants' activity states and responses name.
        public var activities: [ActivityReply]
        public var resources: JSONValue?
        public var dashboard: JSONValue?
        /// `participantProperties` where the deployment serves it (the LabKey-era WCP and
        /// StudyStack do; MyStudies 2.x does not).
        public var participantProperties: JSONValue?

        public init(
            listing: JSONValue, studyInfo: JSONValue? = nil, eligibilityConsent: JSONValue? = nil,
            consentDocument: JSONValue? = nil, activityList: JSONValue? = nil, activities: [ActivityReply] = [],
            resources: JSONValue? = nil, dashboard: JSONValue? = nil, participantProperties: JSONValue? = nil
        ) {
            self.listing = listing
            self.studyInfo = studyInfo
            self.eligibilityConsent = eligibilityConsent
            self.consentDocument = consentDocument
            self.activityList = activityList
            self.activities = activities
            self.resources = resources
            self.dashboard = dashboard
            self.participantProperties = participantProperties
        }

        /// The study's id as its listing gives it.
        public var studyId: String { listing["studyId"]?.string ?? "" }
    }

    /// The `activity` reply for one activity version, or why there is none.
    public struct ActivityReply: Codable, Sendable, Equatable {
        public var activityId: String
        public var version: String
        /// The whole reply (`{"message": "SUCCESS", "activity": {...}}`); nil when the deployment
        /// served no design for this version.
        public var reply: JSONValue?
        /// What the deployment answered instead, when it served none.
        public var refusal: String?

        public init(activityId: String, version: String, reply: JSONValue?, refusal: String? = nil) {
            self.activityId = activityId
            self.version = version
            self.reply = reply
            self.refusal = refusal
        }
    }
}
