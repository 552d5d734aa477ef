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
    /// Every run open at some time in [from, to), by start; or, when `cutAt` is given, every
    /// such run that starts before `cutAt`.
    public var runs: [Run]
    /// Present when the runs asked for were more than one reply holds (docs/security.md,
    /// Budgets): the time the list stops at. Ask again from it for the rest.
    public var cutAt: String?

    public init(timeZone: String, timeZoneSource: String, from: String, to: String, runs: [Run], cutAt: String? = nil) {
        self.timeZone = timeZone
        self.timeZoneSource = timeZoneSource
        self.from = from
        self.to = to
        self.runs = runs
        self.cutAt = cutAt
    }
}

/// A week's runs of one activity (Monday to Sunday in each participant's zone): those that opened,
/// and of them those completed, missed, expired and done without their answers stored (the rest
/// were still open when counted).
public struct RunWeek: Codable, Sendable, Equatable {
    /// The Monday, `YYYY-MM-DD`.
    public var week: String
    public var opened: Int
    public var completed: Int
    public var missed: Int
    public var expired: Int
    /// Done, with answers that could not be stored: neither completed nor missed until they are.
    public var notStored: Int
    /// Of the study's weeks: the runs of the week whose reminder was pushed, and those whose
    /// reminder was decided otherwise (notifications off, no device, the day's limit).
    public var reminded: Int?
    public var notReminded: Int?

    public init(
        week: String, opened: Int, completed: Int, missed: Int, expired: Int, notStored: Int = 0, reminded: Int? = nil,
        notReminded: Int? = nil
    ) {
        self.week = week
        self.opened = opened
        self.completed = completed
        self.missed = missed
        self.expired = expired
        self.notStored = notStored
        self.reminded = reminded
        self.notReminded = notReminded
    }

    /// Completed of those completed or missed, in whole percent; nil when none closed yet. A run
    /// whose answers were not stored is neither, until they are.
    public var adherencePercent: Int? {
        let closed = completed + missed
        return closed == 0 ? nil : (completed * 100 + closed / 2) / closed
    }
}

/// `GET /admin/v1/studies/{studyId}/runs/weeks?from=&to=`: the study's runs per activity and
/// week, summed over its participants as last counted (docs/schedules.md, Kept standings).
public struct StudyRunWeeks: Codable, Sendable, Equatable {
    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        /// Oldest first; only weeks in which a run opened.
        public var weeks: [RunWeek]

        public init(activityId: String, weeks: [RunWeek]) {
            self.activityId = activityId
            self.weeks = weeks
        }
    }

    /// The first and last Mondays covered, `YYYY-MM-DD`.
    public var from: String
    public var to: String
    public var activities: [Activity]

    public init(from: String, to: String, activities: [Activity]) {
        self.from = from
        self.to = to
        self.activities = activities
    }
}

/// `GET /admin/v1/studies/{studyId}/runs/behind?activityId=&atLeast=&limit=&after=`: who is
/// behind right now, an entry per participant and activity in which they missed at least
/// `atLeast` runs in a row, most behind first.
public struct ParticipantsBehind: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var participantId: String
        public var site: String?
        public var activityId: String
        /// Runs missed since the last one completed.
        public var missedInARow: Int
        public var opened: Int
        public var completed: Int
        public var missed: Int
        /// What their app reports of the same activity (`updateActivityState`), when it reported
        /// it: shown beside the server's count, as the two may disagree.
        public var appCompleted: Int?
        public var appMissed: Int?
        public var lastCompletedAt: String?
        /// The run open now and not done, and when it closes.
        public var dueRunId: Int?
        public var dueUntil: String?
        /// Their latest sign-in use or response, whichever was later.
        public var lastContact: String?
        /// The zone their runs are counted in.
        public var timeZone: String?
        /// The SHA-256 of the participant id their app holds: what finds their number in the
        /// study's data at the response service.
        public var appTokenSHA256: String?

        public init(
            participantId: String, site: String?, activityId: String, missedInARow: Int, opened: Int, completed: Int, missed: Int,
            appCompleted: Int?, appMissed: Int?, lastCompletedAt: String?, dueRunId: Int?, dueUntil: String?, lastContact: String?,
            timeZone: String?, appTokenSHA256: String? = nil
        ) {
            self.participantId = participantId
            self.site = site
            self.activityId = activityId
            self.missedInARow = missedInARow
            self.opened = opened
            self.completed = completed
            self.missed = missed
            self.appCompleted = appCompleted
            self.appMissed = appMissed
            self.lastCompletedAt = lastCompletedAt
            self.dueRunId = dueRunId
            self.dueUntil = dueUntil
            self.lastContact = lastContact
            self.timeZone = timeZone
            self.appTokenSHA256 = appTokenSHA256
        }
    }

    public var entries: [Entry]
    /// Pass as `after` for the next page; absent on the last.
    public var next: String?

    public init(entries: [Entry], next: String?) {
        self.entries = entries
        self.next = next
    }
}

/// `GET /admin/v1/studies/{studyId}/participants/{participantId}/runs/weeks?weeks=`: one
/// participant's weekly report, newest week first, per activity, as last counted.
public struct ParticipantRunWeeks: Codable, Sendable, Equatable {
    public struct Week: Codable, Sendable, Equatable {
        /// The Monday, `YYYY-MM-DD`, in the participant's zone.
        public var week: String
        public var activities: [Activity]
        /// Completed of completed or missed, all activities together, in whole percent.
        public var adherencePercent: Int?

        public init(week: String, activities: [Activity], adherencePercent: Int?) {
            self.week = week
            self.activities = activities
            self.adherencePercent = adherencePercent
        }
    }

    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        public var opened: Int
        public var completed: Int
        public var missed: Int
        public var expired: Int
        /// Done, with answers that could not be stored.
        public var notStored: Int

        public init(activityId: String, opened: Int, completed: Int, missed: Int, expired: Int, notStored: Int = 0) {
            self.activityId = activityId
            self.opened = opened
            self.completed = completed
            self.missed = missed
            self.expired = expired
            self.notStored = notStored
        }
    }

    /// The zone the weeks are counted in; nil before their first count.
    public var timeZone: String?
    /// When their standings were last counted.
    public var countedAt: String?
    public var weeks: [Week]

    public init(timeZone: String?, countedAt: String?, weeks: [Week]) {
        self.timeZone = timeZone
        self.countedAt = countedAt
        self.weeks = weeks
    }
}
