/// Replies of the MyStudies study-metadata API (`/StudyMetaData/<name>`), field for field as the
/// apps read them (docs/app-api.md). Every reply carries `"message": "SUCCESS"`.

/// `studyList` and `study`.
public struct StudyListReply: Codable, Sendable, Equatable {
    public var message = "SUCCESS"
    public var studies: [StudyListItem]

    public init(studies: [StudyListItem]) {
        self.studies = studies
    }
}

public struct StudyListItem: Codable, Sendable, Equatable {
    public struct Settings: Codable, Sendable, Equatable {
        public var enrolling: Bool
        /// `ios`, `android` or `all`.
        public var platform: String
        public var rejoin: Bool

        public init(enrolling: Bool, platform: String, rejoin: Bool) {
            self.enrolling = enrolling
            self.platform = platform
            self.rejoin = rejoin
        }
    }

    public var studyId: String
    /// "1.0", "1.1", ...
    public var studyVersion: String
    public var studyLanguage: String
    public var title: String
    public var category: String
    public var sponsorName: String
    public var tagline: String
    /// `Active`, `Upcoming`, `Paused` or `Closed`, exactly (the apps crash on anything else).
    public var status: String
    public var logo: String
    public var settings: Settings

    public init(
        studyId: String, studyVersion: String, studyLanguage: String, title: String, category: String,
        sponsorName: String, tagline: String, status: String, logo: String, settings: Settings
    ) {
        self.studyId = studyId
        self.studyVersion = studyVersion
        self.studyLanguage = studyLanguage
        self.title = title
        self.category = category
        self.sponsorName = sponsorName
        self.tagline = tagline
        self.status = status
        self.logo = logo
        self.settings = settings
    }
}

/// `versionInfo`: `forceUpdate` is the **string** "true" or "false", as the apps parse it.
public struct VersionInfoReply: Codable, Sendable, Equatable {
    public struct Platform: Codable, Sendable, Equatable {
        public var latestVersion: String
        public var forceUpdate: String

        public init(latestVersion: String, forceUpdate: Bool) {
            self.latestVersion = latestVersion
            self.forceUpdate = forceUpdate ? "true" : "false"
        }
    }

    public var message = "SUCCESS"
    public var ios: Platform
    public var android: Platform

    public init(ios: Platform, android: Platform) {
        self.ios = ios
        self.android = android
    }
}

/// `activity`.
public struct ActivityReply: Codable, Sendable, Equatable {
    public var message = "SUCCESS"
    public var activity: ActivityDesign
    /// The Sage assessment the activity was imported from, in the internal reply the response
    /// service reads designs from (never sent to the apps): its answers' tables follow it.
    public var assessment: JSONValue?

    public init(activity: ActivityDesign, assessment: JSONValue? = nil) {
        self.activity = activity
        self.assessment = assessment
    }
}

/// `studyUpdates`: what changed since the version the app holds.
public struct StudyUpdatesReply: Codable, Sendable, Equatable {
    public struct Updates: Codable, Sendable, Equatable {
        public var consent: Bool
        public var activities: Bool
        public var resources: Bool
        public var info: Bool
        public var status: String

        public init(consent: Bool, activities: Bool, resources: Bool, info: Bool, status: String) {
            self.consent = consent
            self.activities = activities
            self.resources = resources
            self.info = info
            self.status = status
        }
    }

    public var message = "SUCCESS"
    public var updates: Updates
    public var currentVersion: String
    /// Whether the consent change `updates.consent` reports asks the participant to sign again
    /// (MyStudies 2.x; its iOS app takes a missing one as true).
    public var enrollAgain: Bool

    public init(updates: Updates, currentVersion: String, enrollAgain: Bool) {
        self.updates = updates
        self.currentVersion = currentVersion
        self.enrollAgain = enrollAgain
    }
}
