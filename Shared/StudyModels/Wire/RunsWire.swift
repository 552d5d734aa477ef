/// `GET /admin/v1/studies/{studyId}/participants/{participantId}/runs?from=&to=`: one participant's
/// runs between two instants, with their states (docs/schedules.md). Instants are RFC 3339 with
/// the participant's offset.
public struct ParticipantRunsReply: Codable, Sendable, Equatable {
    public struct Run: Codable, Sendable, Equatable {
        public var activityId: String
        public var runId: Int
        public var start: String
        /// nil: open for as long as the study runs.
        public var end: String?
        /// `upcoming`, `due`, `completed`, `missed` or `expired`.
        public var state: String
        /// Which sources say it was completed: `app` (the app's activity state), `response` (a
        /// response arrived). Empty unless completed.
        public var completedBy: [String]

        public init(activityId: String, runId: Int, start: String, end: String?, state: String, completedBy: [String]) {
            self.activityId = activityId
            self.runId = runId
            self.start = start
            self.end = end
            self.state = state
            self.completedBy = completedBy
        }
    }

    /// The IANA zone the runs were computed in.
    public var timeZone: String
    /// How it was chosen: `reported` (their app sent it), `inferred` (from their submissions'
    /// offsets) or `study` (nothing known of them: the study's).
    public var timeZoneSource: String
    public var from: String
    public var to: String
    /// Every run open at some time in [from, to), by start.
    public var runs: [Run]

    public init(timeZone: String, timeZoneSource: String, from: String, to: String, runs: [Run]) {
        self.timeZone = timeZone
        self.timeZoneSource = timeZoneSource
        self.from = from
        self.to = to
        self.runs = runs
    }
}
