/// `GET /admin/v1/studies/{studyId}/participant-record?participantId=|appTokenSHA256=&from=&to=&weeks=`
/// (registration): what registration knows of one participant in one reply, as their page shows
/// it: their record, their runs over a window and their weekly report. One request a page rather
/// than three, each with its own sign-in check.
public struct ParticipantRecordReply: Codable, Sendable, Equatable {
    public var participant: ParticipantDetail
    /// Their runs from `from` to `to`; nil when they have not enrolled, or when the runs could not
    /// be computed (`runsProblem` says why).
    public var runs: ParticipantRunsReply?
    public var runsProblem: String?
    /// Their weekly report, newest week first; nil when they have not enrolled.
    public var weeks: ParticipantRunWeeks?

    public init(participant: ParticipantDetail, runs: ParticipantRunsReply?, runsProblem: String?, weeks: ParticipantRunWeeks?) {
        self.participant = participant
        self.runs = runs
        self.runsProblem = runsProblem
        self.weeks = weeks
    }
}

/// `GET /admin/v1/studies/{studyId}/participant-data?participant=|appTokenSHA256=&limit=&archives=`
/// (response): one participant's side of the data in one reply: their number, the hash that links
/// it to registration's record, their latest responses and the Sage archives behind them.
public struct ParticipantDataReply: Codable, Sendable, Equatable {
    /// Their number in the study's tables (the `ParticipantId` column); nil when asked by a hash
    /// no data has arrived under yet.
    public var participantId: Int64?
    /// The SHA-256 of the participant id their app holds; nil when asked by a number no
    /// enrolled app stands for.
    public var appTokenSHA256: String?
    /// Their latest responses, oldest first.
    public var responses: [ResponseSummary]
    /// The Sage archives they sent, newest first.
    public var archives: [SageArchiveSummary]

    public init(participantId: Int64?, appTokenSHA256: String?, responses: [ResponseSummary], archives: [SageArchiveSummary]) {
        self.participantId = participantId
        self.appTokenSHA256 = appTokenSHA256
        self.responses = responses
        self.archives = archives
    }
}

/// `GET /admin/v1/studies/{studyId}/participants-page?<the participants list's parameters>`
/// (registration): what the console's participants page reads from registration in one reply:
/// a page of the participants list, who owes a signature and where the reminders stand, the
/// study's sites (named, not counted) and the adherence per activity. One request a page rather
/// than four, each with its own sign-in check.
public struct ParticipantsPageReply: Codable, Sendable, Equatable {
    /// What `GET .../participants` answers to the same parameters.
    public var participants: ParticipantList
    /// What `GET .../consent-reminders` answers; nil when it cannot be told (`consentRemindersProblem`
    /// says why: no published study, or study-metadata cannot say which versions are in force).
    public var consentReminders: ConsentReminderSummary?
    public var consentRemindersProblem: String?
    /// What `GET .../sites?counts=false` answers.
    public var sites: SiteList
    /// What `GET .../adherence` answers.
    public var adherence: ActivityAdherence

    public init(
        participants: ParticipantList, consentReminders: ConsentReminderSummary?, consentRemindersProblem: String?, sites: SiteList,
        adherence: ActivityAdherence
    ) {
        self.participants = participants
        self.consentReminders = consentReminders
        self.consentRemindersProblem = consentRemindersProblem
        self.sites = sites
        self.adherence = adherence
    }
}
