/// What was read of one app's participants from a MyStudies 2.x deployment's MySQL databases: the
/// participant datastore (accounts, enrolments, sites, invitations, consents), the auth server
/// (password hashes and account states) and the response datastore (activity states). Values are
/// kept as the tables hold them (times as the database's `datetime` text, states as their codes),
/// so the import's reading of them can be checked against the source and repeated without asking
/// the source again.
///
/// It holds personal data and password hashes: `studystack-import participants read` writes it
/// readable by its owner only, and docs/moving-in.md says how to keep and destroy it.
public struct MyStudiesParticipantExport: Codable, Sendable, Equatable {
    /// The server and databases read, for the report (never a password).
    public var source: String
    /// When they were read (RFC 3339).
    public var readAt: String
    /// The app's id at the source (`app_info.custom_app_id`).
    public var appId: String
    /// The zone the databases' `datetime` values were written in (the services' JVM zone: UTC on
    /// the deployments Google's guide sets up).
    public var databaseTimeZone: String
    public var accounts: [Account]
    public var sites: [Site]
    public var invitations: [Invitation]
    public var enrolments: [Enrolment]
    public var consents: [Consent]
    public var activityStates: [ActivityState]
    /// What the reader could not read, located in its table and row.
    public var findings: [MoveInFinding]

    public init(
        source: String, readAt: String, appId: String, databaseTimeZone: String, accounts: [Account] = [], sites: [Site] = [],
        invitations: [Invitation] = [], enrolments: [Enrolment] = [], consents: [Consent] = [], activityStates: [ActivityState] = [],
        findings: [MoveInFinding] = []
    ) {
        self.source = source
        self.readAt = readAt
        self.appId = appId
        self.databaseTimeZone = databaseTimeZone
        self.accounts = accounts
        self.sites = sites
        self.invitations = invitations
        self.enrolments = enrolments
        self.consents = consents
        self.activityStates = activityStates
        self.findings = findings
    }

    /// A participant's account: `user_details` with the auth server's `users` row of the same
    /// `user_id`.
    public struct Account: Codable, Sendable, Equatable {
        /// `user_id`: the id the apps hold (`userId`), the same in both databases.
        public var userId: String
        public var email: String
        /// `user_details.status`: 1 active, 4 awaiting e-mail confirmation, 3 leaving, 0 left.
        public var status: Int
        /// `users.status` at the auth server: 0 active, 1 awaiting confirmation, 2 locked,
        /// 3 signed in with a temporary password, 4 deactivated. Nil when the auth server has no row.
        public var authStatus: Int?
        public var locale: String?
        /// `verification_time`, as the table holds it (text since 2.0.8).
        public var verifiedAt: String?
        /// `users.created`.
        public var createdAt: String?
        /// `users.user_info.password`: the hex SHA-512 of salt and password, its salt, and when it
        /// expires (milliseconds since 1970).
        public var passwordHash: String?
        public var passwordSalt: String?
        public var passwordExpiresAt: Int64?
        public var remoteNotifications: Bool?
        public var localNotifications: Bool?
        public var reminderLeadTime: String?

        public init(
            userId: String, email: String, status: Int, authStatus: Int? = nil, locale: String? = nil, verifiedAt: String? = nil,
            createdAt: String? = nil, passwordHash: String? = nil, passwordSalt: String? = nil, passwordExpiresAt: Int64? = nil,
            remoteNotifications: Bool? = nil, localNotifications: Bool? = nil, reminderLeadTime: String? = nil
        ) {
            self.userId = userId
            self.email = email
            self.status = status
            self.authStatus = authStatus
            self.locale = locale
            self.verifiedAt = verifiedAt
            self.createdAt = createdAt
            self.passwordHash = passwordHash
            self.passwordSalt = passwordSalt
            self.passwordExpiresAt = passwordExpiresAt
            self.remoteNotifications = remoteNotifications
            self.localNotifications = localNotifications
            self.reminderLeadTime = reminderLeadTime
        }
    }

    /// `sites`, with its location's name.
    public struct Site: Codable, Sendable, Equatable {
        public var siteId: String
        public var studyId: String
        public var name: String?
        public var location: String?
        /// 1 active, 0 decommissioned.
        public var status: Int?
        public var targetEnrollment: Int?
        public var createdAt: String?

        public init(siteId: String, studyId: String, name: String? = nil, location: String? = nil, status: Int? = nil, targetEnrollment: Int? = nil, createdAt: String? = nil) {
            self.siteId = siteId
            self.studyId = studyId
            self.name = name
            self.location = location
            self.status = status
            self.targetEnrollment = targetEnrollment
            self.createdAt = createdAt
        }
    }

    /// `participant_registry_site`: a person a site added, invited or not, with their token.
    public struct Invitation: Codable, Sendable, Equatable {
        public var invitationId: String
        public var studyId: String
        public var siteId: String?
        public var email: String?
        public var enrollmentToken: String?
        public var tokenExpiresAt: String?
        public var tokenUsed: Bool?
        /// `N` new (added, not invited), `I` invited, `E` enrolled, `D` disabled.
        public var onboardingStatus: String?
        public var invitedAt: String?
        public var invitationCount: Int?
        public var disabledAt: String?
        public var createdAt: String?

        public init(
            invitationId: String, studyId: String, siteId: String? = nil, email: String? = nil, enrollmentToken: String? = nil,
            tokenExpiresAt: String? = nil, tokenUsed: Bool? = nil, onboardingStatus: String? = nil, invitedAt: String? = nil,
            invitationCount: Int? = nil, disabledAt: String? = nil, createdAt: String? = nil
        ) {
            self.invitationId = invitationId
            self.studyId = studyId
            self.siteId = siteId
            self.email = email
            self.enrollmentToken = enrollmentToken
            self.tokenExpiresAt = tokenExpiresAt
            self.tokenUsed = tokenUsed
            self.onboardingStatus = onboardingStatus
            self.invitedAt = invitedAt
            self.invitationCount = invitationCount
            self.disabledAt = disabledAt
            self.createdAt = createdAt
        }
    }

    /// `participant_study_info`: an account's standing in a study.
    public struct Enrolment: Codable, Sendable, Equatable {
        public var userId: String
        public var studyId: String
        /// The participant id the app sends with every response.
        public var participantId: String?
        public var siteId: String?
        public var invitationId: String?
        /// `enrolled`, `yetToEnroll`, `withdrawn`, `notEligible`.
        public var status: String?
        public var enrolledAt: String?
        public var withdrawnAt: String?
        /// `Provided`, `Not Provided`, `Not Applicable`, `Undefined`.
        public var dataSharing: String?
        public var bookmarked: Bool?
        public var eligible: Bool?
        public var consented: Bool?
        public var completion: Int?
        public var adherence: Int?
        /// `user_study_version` (2.0.11): the study version the participant's app last held.
        public var studyVersion: String?

        public init(
            userId: String, studyId: String, participantId: String? = nil, siteId: String? = nil, invitationId: String? = nil,
            status: String? = nil, enrolledAt: String? = nil, withdrawnAt: String? = nil, dataSharing: String? = nil,
            bookmarked: Bool? = nil, eligible: Bool? = nil, consented: Bool? = nil, completion: Int? = nil, adherence: Int? = nil,
            studyVersion: String? = nil
        ) {
            self.userId = userId
            self.studyId = studyId
            self.participantId = participantId
            self.siteId = siteId
            self.invitationId = invitationId
            self.status = status
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
            self.dataSharing = dataSharing
            self.bookmarked = bookmarked
            self.eligible = eligible
            self.consented = consented
            self.completion = completion
            self.adherence = adherence
            self.studyVersion = studyVersion
        }
    }

    /// `study_consent`: one signature, with the PDF the participant signed.
    public struct Consent: Codable, Sendable, Equatable {
        public var consentId: String
        public var userId: String
        public var studyId: String
        public var version: String?
        /// `completed` or `pending`.
        public var status: String?
        public var consentedAt: String?
        public var dataSharing: String?
        /// Where the deployment keeps the PDF (`pdfPath`, in its consent bucket).
        public var pdfPath: String?
        /// The PDF's bytes, base64; nil when it could not be read (a finding says why).
        public var pdf: String?

        public init(
            consentId: String, userId: String, studyId: String, version: String? = nil, status: String? = nil, consentedAt: String? = nil,
            dataSharing: String? = nil, pdfPath: String? = nil, pdf: String? = nil
        ) {
            self.consentId = consentId
            self.userId = userId
            self.studyId = studyId
            self.version = version
            self.status = status
            self.consentedAt = consentedAt
            self.dataSharing = dataSharing
            self.pdfPath = pdfPath
            self.pdf = pdf
        }
    }

    /// The response datastore's `participant_activities`: where a participant is in an activity.
    public struct ActivityState: Codable, Sendable, Equatable {
        public var participantId: String
        public var studyId: String
        public var activityId: String
        public var activityVersion: String?
        /// `yetToJoin`, `inProgress`, `completed`, `abandoned`.
        public var state: String?
        public var runId: String?
        public var bookmarked: Bool?
        public var completed: Int?
        public var missed: Int?
        public var total: Int?

        public init(
            participantId: String, studyId: String, activityId: String, activityVersion: String? = nil, state: String? = nil,
            runId: String? = nil, bookmarked: Bool? = nil, completed: Int? = nil, missed: Int? = nil, total: Int? = nil
        ) {
            self.participantId = participantId
            self.studyId = studyId
            self.activityId = activityId
            self.activityVersion = activityVersion
            self.state = state
            self.runId = runId
            self.bookmarked = bookmarked
            self.completed = completed
            self.missed = missed
            self.total = total
        }
    }
}
