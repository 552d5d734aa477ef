import Foundation

/// `GET /admin/v1/studies/{studyId}/participants` on the registration service: the app users who
/// joined a study, a page at a time.
public struct ParticipantList: Codable, Sendable, Equatable {
    public struct Participant: Codable, Sendable, Equatable {
        /// The participant's id in this study: random, different in each study, and neither the
        /// account's id nor the response service's token.
        public var participantId: String
        /// Only for a study admin (or a super-admin); reading it is audited.
        public var email: String?
        /// As the apps report it: `yetToJoin`, `inProgress`, `completed`, `notEligible`,
        /// `Withdrawn`.
        public var status: String
        public var enrolledAt: Date?
        public var withdrawnAt: Date?
        /// The consent versions signed, oldest first.
        public var consentVersions: [String]
        /// The data-sharing choice of the newest signed consent (empty when not asked).
        public var sharing: String?
        /// When the app last reported an activity's state.
        public var lastActivityAt: Date?
        /// The study's completion (runs completed of all runs) and adherence (runs completed of
        /// those whose time has passed), in percent, from the runs the app reports for each
        /// activity; the app's own study figures while it has reported no runs.
        public var completion: Int
        public var adherence: Int
        /// The site whose invitation they joined with, if any.
        public var siteId: String?
        public var siteName: String?
        /// The SHA-256 of the participant id the app reported (the response service's token),
        /// once it has: the response service's participant numbers are found by it.
        public var appTokenSHA256: String?
        /// In the study with no signature of a consent version in force (`consentVersionsInForce`).
        public var owesConsent: Bool

        public init(
            participantId: String, email: String?, status: String, enrolledAt: Date?, withdrawnAt: Date?,
            consentVersions: [String], sharing: String?, lastActivityAt: Date?, completion: Int, adherence: Int,
            siteId: String? = nil, siteName: String? = nil, appTokenSHA256: String? = nil, owesConsent: Bool = false
        ) {
            self.appTokenSHA256 = appTokenSHA256
            self.owesConsent = owesConsent
            self.siteId = siteId
            self.siteName = siteName
            self.participantId = participantId
            self.email = email
            self.status = status
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
            self.consentVersions = consentVersions
            self.sharing = sharing
            self.lastActivityAt = lastActivityAt
            self.completion = completion
            self.adherence = adherence
        }
    }

    public var participants: [Participant]
    /// The `after` of the next page; absent on the last page.
    public var next: String?
    /// Whether e-mail addresses are shown (the caller may see identities).
    public var identities: Bool
    /// The consent versions a signature satisfies: since the newest that asked those who signed
    /// to sign again; absent when none ever did (any signature does).
    public var consentVersionsInForce: [String]?

    public init(participants: [Participant], next: String?, identities: Bool, consentVersionsInForce: [String]? = nil) {
        self.participants = participants
        self.next = next
        self.identities = identities
        self.consentVersionsInForce = consentVersionsInForce
    }

    /// The statuses a participant can have in a study.
    public static let statuses = ["yetToJoin", "inProgress", "completed", "notEligible", "Withdrawn"]

    /// The orders a list can be in (`sort`), each ascending or descending (`order`); ties, and the
    /// default, go by participant id.
    public enum Sort: String, Codable, Sendable, CaseIterable {
        case participantId, status, enrolledAt, lastActivityAt
    }
}

/// Where an app account stands: what the admin API shows of it beside a participant or an app user.
public struct AccountState: Codable, Sendable, Equatable {
    /// Whether the e-mail address was confirmed with the code sent to it.
    public var verified: Bool
    /// Set while too many failed sign-ins keep the account locked.
    public var lockedUntil: Date?
    /// Set while an admin has disabled the account: it cannot sign in.
    public var disabledAt: Date?

    public init(verified: Bool, lockedUntil: Date?, disabledAt: Date?) {
        self.verified = verified
        self.lockedUntil = lockedUntil
        self.disabledAt = disabledAt
    }
}

/// `GET /admin/v1/studies/{studyId}/participants/{participantId}`: one participant of a study, with
/// their consent history and the state of each activity as their app reported it.
public struct ParticipantDetail: Codable, Sendable, Equatable {
    public struct Consent: Codable, Sendable, Equatable {
        /// Names the consent in `.../consents/{consentId}/pdf`.
        public var consentId: String
        public var version: String
        /// `completed` (signed) or `pending`.
        public var status: String
        public var eligibility: Bool?
        /// The data-sharing choice given with it (empty when not asked).
        public var sharing: String
        public var recordedAt: Date
        /// The signed PDF's SHA-256 (hex) and size, when the app sent one.
        public var pdfSHA256: String?
        public var pdfBytes: Int?

        public init(
            consentId: String, version: String, status: String, eligibility: Bool?, sharing: String, recordedAt: Date,
            pdfSHA256: String?, pdfBytes: Int?
        ) {
            self.consentId = consentId
            self.version = version
            self.status = status
            self.eligibility = eligibility
            self.sharing = sharing
            self.recordedAt = recordedAt
            self.pdfSHA256 = pdfSHA256
            self.pdfBytes = pdfBytes
        }
    }

    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        public var version: String
        /// `yetToJoin`, `inProgress`, `completed` or `abandoned`.
        public var state: String
        public var runId: String
        public var runsTotal: Int
        public var runsCompleted: Int
        public var runsMissed: Int
        public var updatedAt: Date

        public init(
            activityId: String, version: String, state: String, runId: String, runsTotal: Int, runsCompleted: Int,
            runsMissed: Int, updatedAt: Date
        ) {
            self.activityId = activityId
            self.version = version
            self.state = state
            self.runId = runId
            self.runsTotal = runsTotal
            self.runsCompleted = runsCompleted
            self.runsMissed = runsMissed
            self.updatedAt = updatedAt
        }
    }

    public var participant: ParticipantList.Participant
    public var account: AccountState
    /// Oldest first.
    public var consents: [Consent]
    /// In activity-id order.
    public var activities: [Activity]
    /// Whether the caller may download the signed PDFs (a study admin or super-admin).
    public var mayReadConsentPDFs: Bool
    /// The SHA-256 (hex) of the participant id the app holds, as the response service keys the
    /// participant (its responses list takes it as `appTokenSHA256`); absent until the app has
    /// reported that id. A hash of a 128-bit secret: it names the participant, it cannot act as
    /// them.
    public var appTokenSHA256: String?

    public init(
        participant: ParticipantList.Participant, account: AccountState, consents: [Consent], activities: [Activity],
        mayReadConsentPDFs: Bool, appTokenSHA256: String? = nil
    ) {
        self.participant = participant
        self.account = account
        self.consents = consents
        self.activities = activities
        self.mayReadConsentPDFs = mayReadConsentPDFs
        self.appTokenSHA256 = appTokenSHA256
    }
}

/// `GET /admin/v1/apps/{appId}/users`: the accounts of an app, whether or not they joined a study
/// (super-admins only: an account spans the app's studies).
public struct AppUserList: Codable, Sendable, Equatable {
    public struct User: Codable, Sendable, Equatable {
        /// The account's id (the `userId` the apps send).
        public var userId: String
        public var email: String
        public var orgId: String
        public var account: AccountState
        public var createdAt: Date
        /// When one of its sessions was last used.
        public var lastSignInAt: Date?
        /// The studies it joined, with its status in each.
        public var studies: [Study]

        public init(
            userId: String, email: String, orgId: String, account: AccountState, createdAt: Date, lastSignInAt: Date?,
            studies: [Study]
        ) {
            self.userId = userId
            self.email = email
            self.orgId = orgId
            self.account = account
            self.createdAt = createdAt
            self.lastSignInAt = lastSignInAt
            self.studies = studies
        }
    }

    public struct Study: Codable, Sendable, Equatable {
        public var studyId: String
        public var status: String

        public init(studyId: String, status: String) {
            self.studyId = studyId
            self.status = status
        }
    }

    public var users: [User]
    /// The `after` of the next page; absent on the last page.
    public var next: String?

    public init(users: [User], next: String?) {
        self.users = users
        self.next = next
    }

    /// The `state` filter's values.
    public static let states = ["unverified", "verified", "locked", "disabled"]
}

/// `GET /admin/v1/studies/{studyId}/adherence`: per activity, how the participants in the study
/// stand, from the run counts their apps report.
public struct ActivityAdherence: Codable, Sendable, Equatable {
    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        /// Started, and no run missed.
        public var upToDate: Int
        /// At least one run missed.
        public var behind: Int
        /// Not started (or never reported by their app).
        public var notStarted: Int
        /// Runs completed and missed, all participants together.
        public var runsCompleted: Int
        public var runsMissed: Int

        public init(activityId: String, upToDate: Int, behind: Int, notStarted: Int, runsCompleted: Int, runsMissed: Int) {
            self.activityId = activityId
            self.upToDate = upToDate
            self.behind = behind
            self.notStarted = notStarted
            self.runsCompleted = runsCompleted
            self.runsMissed = runsMissed
        }
    }

    /// Participants in the study now (`inProgress` or `completed`).
    public var participants: Int
    /// In activity-id order; an activity no participant's app has reported is absent.
    public var activities: [Activity]

    public init(participants: Int, activities: [Activity]) {
        self.participants = participants
        self.activities = activities
    }
}

/// `GET /admin/v1/studies/{studyId}/enrollment-timeline`: enrollments and withdrawals per day
/// (UTC), per site. Counts only.
public struct EnrollmentTimeline: Codable, Sendable, Equatable {
    public struct Day: Codable, Sendable, Equatable {
        /// `yyyy-MM-dd`, UTC.
        public var date: String
        public var enrolled: Int
        public var withdrawn: Int

        public init(date: String, enrolled: Int, withdrawn: Int) {
            self.date = date
            self.enrolled = enrolled
            self.withdrawn = withdrawn
        }
    }

    public struct Site: Codable, Sendable, Equatable {
        /// Nil for participants who joined without a site.
        public var siteId: String?
        public var name: String
        /// Days with any enrollment or withdrawal, in order.
        public var days: [Day]

        public init(siteId: String?, name: String, days: [Day]) {
            self.siteId = siteId
            self.name = name
            self.days = days
        }
    }

    /// The study's sites in name order (each, even without participants), then those without a
    /// site when there are any.
    public var sites: [Site]

    public init(sites: [Site]) { self.sites = sites }
}

/// `POST /admin/v1/studies/{studyId}/consent-reminders`: remind everyone who owes a signature.
/// Quiet hours are `HH:mm` in each participant's zone (both or neither; neither is 21:00 to
/// 08:00); `message` replaces the push's standard text.
public struct ConsentReminderRequest: Codable, Sendable, Equatable {
    public var quietFrom: String?
    public var quietUntil: String?
    public var message: String?

    public init(quietFrom: String? = nil, quietUntil: String? = nil, message: String? = nil) {
        self.quietFrom = quietFrom
        self.quietUntil = quietUntil
        self.message = message
    }

    public static let defaultQuietHours = (from: "21:00", until: "08:00")
    /// The most characters of a reminder's text: a push shows a line or two.
    public static let maxMessageLength = 240
}

/// What a request for consent reminders did, and where the study's reminders stand.
public struct ConsentReminderSummary: Codable, Sendable, Equatable {
    /// Reminders the request added (one a participant who owes a signature and has none waiting).
    public var requested: Int?
    /// Participants who owe a signature now.
    public var owing: Int
    /// Reminders waiting to be decided (for their time, or the end of quiet hours).
    public var waiting: Int
    /// Decided reminders by outcome: `queued` (pushed to their devices), `opted_out`
    /// (notifications off), `no_device`, `signed` (signed meanwhile), `left` (left the study).
    public var outcomes: [String: Int]
    public var consentVersionsInForce: [String]?
    public var lastRequestedAt: Date?
    public var lastRequestedBy: String?

    public init(
        requested: Int? = nil, owing: Int, waiting: Int, outcomes: [String: Int], consentVersionsInForce: [String]?,
        lastRequestedAt: Date?, lastRequestedBy: String?
    ) {
        self.requested = requested
        self.owing = owing
        self.waiting = waiting
        self.outcomes = outcomes
        self.consentVersionsInForce = consentVersionsInForce
        self.lastRequestedAt = lastRequestedAt
        self.lastRequestedBy = lastRequestedBy
    }
}
