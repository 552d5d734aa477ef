/// Replies of the registration server's account calls (`/fdahpUserRegWS/<name>.api`). Every
/// success is a JSON object with `"message": "success"` (lower case, as the original).

public struct RegistrationSuccess: Codable, Sendable, Equatable {
    public var message = "success"
    public init() {}
}

/// `register.api` and `login.api`: the apps force-unwrap `userId`, `verified` and `auth`.
public struct SessionReply: Codable, Sendable, Equatable {
    public var message = "success"
    public var userId: String
    public var verified: Bool
    public var auth: String
    public var refreshToken: String
    /// Login only: the password is temporary or older than the expiry; the app asks for a new one.
    public var resetPassword: Bool?

    public init(userId: String, verified: Bool, auth: String, refreshToken: String, resetPassword: Bool? = nil) {
        self.userId = userId
        self.verified = verified
        self.auth = auth
        self.refreshToken = refreshToken
        self.resetPassword = resetPassword
    }
}

/// `confirmRegistration.api`.
public struct VerifiedReply: Codable, Sendable, Equatable {
    public var message = "success"
    public var verified: Bool

    public init(verified: Bool) { self.verified = verified }
}

/// `userProfile.api`: the apps force-cast both dictionaries.
public struct UserProfileReply: Codable, Sendable, Equatable {
    public struct Profile: Codable, Sendable, Equatable {
        public var emailId: String
        public var firstName: String
        public var lastName: String

        public init(emailId: String, firstName: String, lastName: String) {
            self.emailId = emailId
            self.firstName = firstName
            self.lastName = lastName
        }
    }

    public struct Settings: Codable, Sendable, Equatable {
        public var remoteNotifications: Bool
        public var localNotifications: Bool
        public var touchId: Bool
        public var passcode: Bool
        /// `HH:mm`.
        public var reminderLeadTime: String
        public var locale: String

        public init(
            remoteNotifications: Bool = false, localNotifications: Bool = false, touchId: Bool = false,
            passcode: Bool = false, reminderLeadTime: String = "00:00", locale: String = ""
        ) {
            self.remoteNotifications = remoteNotifications
            self.localNotifications = localNotifications
            self.touchId = touchId
            self.passcode = passcode
            self.reminderLeadTime = reminderLeadTime
            self.locale = locale
        }
    }

    public var message = "success"
    public var profile: Profile
    public var settings: Settings

    public init(profile: Profile, settings: Settings) {
        self.profile = profile
        self.settings = settings
    }
}

/// `studyState.api`: missing dates and ids are empty strings, as the original sent them.
public struct StudyStateReply: Codable, Sendable, Equatable {
    public struct Study: Codable, Sendable, Equatable {
        public var studyId: String
        /// `yetToJoin`, `inProgress`, `completed`, `notEligible` or `Withdrawn`.
        public var status: String
        public var bookmarked: Bool
        /// The response service's app token for this enrollment.
        public var participantId: String
        public var enrolledDate: String
        public var completion: Int
        public var adherence: Int

        public init(
            studyId: String, status: String, bookmarked: Bool, participantId: String, enrolledDate: String,
            completion: Int, adherence: Int
        ) {
            self.studyId = studyId
            self.status = status
            self.bookmarked = bookmarked
            self.participantId = participantId
            self.enrolledDate = enrolledDate
            self.completion = completion
            self.adherence = adherence
        }
    }

    public var message = "success"
    public var studies: [Study]

    public init(studies: [Study]) { self.studies = studies }
}

/// `activityState.api`: `activityRun` is force-unwrapped on every item.
public struct ActivityStateReply: Codable, Sendable, Equatable {
    public struct Run: Codable, Sendable, Equatable {
        public var total: Int
        public var completed: Int
        public var missed: Int

        public init(total: Int, completed: Int, missed: Int) {
            self.total = total
            self.completed = completed
            self.missed = missed
        }
    }

    public struct CustomRun: Codable, Sendable, Equatable {
        public var runStartDate: String
        public var runEndDate: String

        public init(runStartDate: String, runEndDate: String) {
            self.runStartDate = runStartDate
            self.runEndDate = runEndDate
        }
    }

    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        public var activityVersion: String
        public var activityState: String
        public var activityRunId: String
        public var bookmarked: Bool
        public var activityStartDate: String
        public var activityEndDate: String
        public var anchorDateVersion: String
        public var anchorDatecreatedDate: String
        public var lastModifiedDate: String
        public var customScheduleRuns: [CustomRun]
        public var activityRun: Run

        public init(
            activityId: String, activityVersion: String, activityState: String, activityRunId: String, bookmarked: Bool,
            activityStartDate: String, activityEndDate: String, anchorDateVersion: String, anchorDatecreatedDate: String,
            lastModifiedDate: String, customScheduleRuns: [CustomRun], activityRun: Run
        ) {
            self.activityId = activityId
            self.activityVersion = activityVersion
            self.activityState = activityState
            self.activityRunId = activityRunId
            self.bookmarked = bookmarked
            self.activityStartDate = activityStartDate
            self.activityEndDate = activityEndDate
            self.anchorDateVersion = anchorDateVersion
            self.anchorDatecreatedDate = anchorDatecreatedDate
            self.lastModifiedDate = lastModifiedDate
            self.customScheduleRuns = customScheduleRuns
            self.activityRun = activityRun
        }
    }

    public var message = "success"
    public var activities: [Activity]

    public init(activities: [Activity]) { self.activities = activities }
}

/// `consentPDF.api`: the apps force-cast `consent`.
public struct ConsentPDFReply: Codable, Sendable, Equatable {
    public struct Consent: Codable, Sendable, Equatable {
        public var version: String
        /// The signed PDF, base64.
        public var content: String
        public var type = "application/pdf"

        public init(version: String, content: String) {
            self.version = version
            self.content = content
        }
    }

    public var message = "success"
    public var consent: Consent
    public var sharing: String

    public init(consent: Consent, sharing: String) {
        self.consent = consent
        self.sharing = sharing
    }
}
