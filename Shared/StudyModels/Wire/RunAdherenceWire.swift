import Foundation

/// The tables the response service keeps for every study beside its activities' (their names are
/// not an activity's).
public enum ResponseLists {
    /// The research team's values per participant.
    public static let participantProperties = "ParticipantProperties"
    /// Each participant's runs per activity and week, as registration counts them.
    public static let runAdherence = "RunAdherence"
    /// Names no activity may have, compared without case.
    public static let reserved = [participantProperties, runAdherence]
}

/// A participant's weeks that changed when registration counted them, for the response
/// service's `RunAdherence` table (`InternalCalls.runWeeks`): what the LabKey API and the exports
/// give researchers. A week whose counts are all zero is one no longer counted (the schedule
/// changed). Deliveries are not ordered: a row counted before the one kept changes nothing.
public struct RunAdherenceUpdate: Codable, Sendable, Equatable {
    public struct Week: Codable, Sendable, Equatable {
        public var activityId: String
        /// The Monday, `yyyy-MM-dd`, of the week on the participant's clock.
        public var week: String
        public var opened: Int
        public var completed: Int
        public var missed: Int
        public var expired: Int
        /// Done, with answers that could not be stored (`RunState.notStored`).
        public var notStored: Int

        public init(activityId: String, week: String, opened: Int, completed: Int, missed: Int, expired: Int, notStored: Int = 0) {
            self.activityId = activityId
            self.week = week
            self.opened = opened
            self.completed = completed
            self.missed = missed
            self.expired = expired
            self.notStored = notStored
        }

        private enum CodingKeys: String, CodingKey { case activityId, week, opened, completed, missed, expired, notStored }

        /// A registration of before `notStored` was counted sends none: zero.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            activityId = try c.decode(String.self, forKey: .activityId)
            week = try c.decode(String.self, forKey: .week)
            opened = try c.decode(Int.self, forKey: .opened)
            completed = try c.decode(Int.self, forKey: .completed)
            missed = try c.decode(Int.self, forKey: .missed)
            expired = try c.decode(Int.self, forKey: .expired)
            notStored = try c.decodeIfPresent(Int.self, forKey: .notStored) ?? 0
        }
    }

    /// SHA-256 (hex) of the participant id their app holds: how the response service knows them.
    public var participantTokenSHA256: String
    /// When registration counted them, to the fraction of a second.
    public var countedAt: Date
    public var weeks: [Week]

    /// The most weeks one update carries: two years of a dozen activities.
    public static let maxWeeks = 2_000

    public init(participantTokenSHA256: String, countedAt: Date, weeks: [Week]) {
        self.participantTokenSHA256 = participantTokenSHA256
        self.countedAt = countedAt
        self.weeks = weeks
    }

    private enum CodingKeys: String, CodingKey { case participantTokenSHA256, countedAt, weeks }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        participantTokenSHA256 = try c.decode(String.self, forKey: .participantTokenSHA256)
        countedAt = try PreciseInstants.decode(c, .countedAt)
        weeks = try c.decode([Week].self, forKey: .weeks)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(participantTokenSHA256, forKey: .participantTokenSHA256)
        try PreciseInstants.encode(countedAt, &c, .countedAt)
        try c.encode(weeks, forKey: .weeks)
    }

    /// Whether every part is within bounds: a hash of 64 lowercase hex digits, at most `maxWeeks`
    /// weeks, activity ids of 1 to 100 scalars, Mondays that are dates, counts from 0 to a
    /// million. An update that is not is refused whole.
    public var isWellFormed: Bool {
        TokenHash.isWellFormed(participantTokenSHA256)
            && weeks.count <= Self.maxWeeks
            && weeks.allSatisfy { week in
                (1...100).contains(week.activityId.unicodeScalars.count) && week.week.unicodeScalars.count == 10
                    && ParticipantAnchors.day(week.week) != nil
                    && [week.opened, week.completed, week.missed, week.expired, week.notStored].allSatisfy { (0...1_000_000).contains($0) }
            }
    }
}
