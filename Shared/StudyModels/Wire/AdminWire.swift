import Foundation

// The study-metadata admin API's replies, as the service writes them and the console reads them
// (docs/admin-api.md): one definition for both sides.

/// `POST /admin/v1/login`'s body.
public struct AdminSignIn: Codable, Sendable {
    public var email: String
    public var password: String

    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// `POST /admin/v1/login`'s reply: the bearer token, shown this once.
public struct AdminSignedIn: Codable, Sendable {
    public var token: String
    public var expiresAt: Date
    public var admin: AdminProfile

    public init(token: String, expiresAt: Date, admin: AdminProfile) {
        self.token = token
        self.expiresAt = expiresAt
        self.admin = admin
    }
}

/// `GET /admin/v1/me`: who a token belongs to and what they hold.
public struct AdminProfile: Codable, Sendable, Equatable {
    public var id: UUID
    public var email: String
    public var role: AdminRole
    public var studyRoles: [String: StudyRole]

    public init(id: UUID, email: String, role: AdminRole, studyRoles: [String: StudyRole]) {
        self.id = id
        self.email = email
        self.role = role
        self.studyRoles = studyRoles
    }

    /// The admin's role on `studyId`: super-admins hold every role.
    public func role(on studyId: String) -> StudyRole? {
        role == .superAdmin ? .studyAdmin : studyRoles[studyId]
    }
}

/// One study in `GET /admin/v1/studies`.
public struct StudySummary: Codable, Sendable, Equatable {
    public var studyId: String
    public var appId: String
    /// The English name.
    public var name: String
    public var status: StudyStatus
    public var draftUpdatedAt: Date
    public var draftUpdatedBy: String
    /// Counts the draft's changes; `GET .../draft` sends it as its `ETag`, and a `PUT` with
    /// `If-Match` saves only over that revision.
    public var draftRevision: Int
    /// The role the admin asking holds on the study (super-admins hold every role, shown as
    /// studyAdmin), so a page needs no second call to know what it may offer.
    public var role: StudyRole?

    public init(
        studyId: String, appId: String, name: String, status: StudyStatus, draftUpdatedAt: Date, draftUpdatedBy: String,
        draftRevision: Int, role: StudyRole? = nil
    ) {
        self.role = role
        self.studyId = studyId
        self.appId = appId
        self.name = name
        self.status = status
        self.draftUpdatedAt = draftUpdatedAt
        self.draftUpdatedBy = draftUpdatedBy
        self.draftRevision = draftRevision
    }
}

/// `GET /admin/v1/studies`.
public struct StudyList: Codable, Sendable {
    public var studies: [StudySummary]

    public init(studies: [StudySummary]) {
        self.studies = studies
    }
}

/// `PUT /admin/v1/studies/{studyId}/draft` (and an activity import): what was saved, with the
/// incomplete content that did not block it.
public struct DraftSaved: Codable, Sendable {
    public var studyId: String
    public var created: Bool
    public var warnings: [ValidationProblem]

    public init(studyId: String, created: Bool, warnings: [ValidationProblem]) {
        self.studyId = studyId
        self.created = created
        self.warnings = warnings
    }
}

/// `GET /admin/v1/apps`.
public struct AppList: Codable, Sendable {
    public var apps: [AppDefinition]

    public init(apps: [AppDefinition]) {
        self.apps = apps
    }
}

/// One frozen version in `GET /admin/v1/studies/{studyId}/versions`.
public struct StudyVersionRecord: Codable, Sendable, Equatable {
    public var version: Int
    /// How the apps see it ("1.0", "1.1", ...).
    public var label: String
    public var consentVersion: Int
    public var activityVersions: [String: Int]
    public var changes: StudyChanges
    public var publishedAt: Date
    public var publishedBy: String

    public init(
        version: Int, label: String, consentVersion: Int, activityVersions: [String: Int], changes: StudyChanges,
        publishedAt: Date, publishedBy: String
    ) {
        self.version = version
        self.label = label
        self.consentVersion = consentVersion
        self.activityVersions = activityVersions
        self.changes = changes
        self.publishedAt = publishedAt
        self.publishedBy = publishedBy
    }
}

/// `GET /admin/v1/studies/{studyId}/versions`.
public struct StudyVersionList: Codable, Sendable {
    public var versions: [StudyVersionRecord]

    public init(versions: [StudyVersionRecord]) {
        self.versions = versions
    }
}

/// `POST /admin/v1/studies/{studyId}/{action}`: the status after the action, and the version it
/// froze, when it froze one.
public struct StudyActionResult: Codable, Sendable {
    public var studyId: String
    public var status: StudyStatus
    public var version: StudyVersionRecord?

    public init(studyId: String, status: StudyStatus, version: StudyVersionRecord?) {
        self.studyId = studyId
        self.status = status
        self.version = version
    }
}

/// One admin account in `GET /admin/v1/admins` (super-admin).
public struct AdminAccount: Codable, Sendable, Equatable {
    public var id: UUID
    public var email: String
    public var role: AdminRole
    /// False until the invitation is accepted.
    public var active: Bool
    public var studyRoles: [String: StudyRole]

    public init(id: UUID, email: String, role: AdminRole, active: Bool, studyRoles: [String: StudyRole]) {
        self.id = id
        self.email = email
        self.role = role
        self.active = active
        self.studyRoles = studyRoles
    }
}

public struct AdminAccountList: Codable, Sendable {
    public var admins: [AdminAccount]

    public init(admins: [AdminAccount]) {
        self.admins = admins
    }
}

/// `POST /admin/v1/admins`'s body.
public struct AdminInvite: Codable, Sendable {
    public var email: String
    public var role: AdminRole?

    public init(email: String, role: AdminRole?) {
        self.email = email
        self.role = role
    }
}

/// `POST /admin/v1/admins`'s reply: the invitation token, shown this once.
public struct AdminInvited: Codable, Sendable {
    public struct Invitation: Codable, Sendable {
        /// The invitee sends it to `POST /admin/v1/invitations/accept`.
        public var token: String
        public var expiresAt: Date

        public init(token: String, expiresAt: Date) {
            self.token = token
            self.expiresAt = expiresAt
        }
    }

    public var id: UUID
    public var email: String
    public var role: AdminRole
    public var invitation: Invitation

    public init(id: UUID, email: String, role: AdminRole, invitation: Invitation) {
        self.id = id
        self.email = email
        self.role = role
        self.invitation = invitation
    }
}

/// `POST /admin/v1/invitations/accept`'s body.
public struct AdminInvitationAcceptance: Codable, Sendable {
    public var token: String
    public var password: String

    public init(token: String, password: String) {
        self.token = token
        self.password = password
    }
}

/// Someone holding a role on a study, in `GET /admin/v1/studies/{studyId}/team`.
public struct StudyTeamMember: Codable, Sendable, Equatable {
    public var adminId: UUID
    public var email: String
    public var role: StudyRole

    public init(adminId: UUID, email: String, role: StudyRole) {
        self.adminId = adminId
        self.email = email
        self.role = role
    }
}

public struct StudyTeam: Codable, Sendable {
    public var members: [StudyTeamMember]

    public init(members: [StudyTeamMember]) {
        self.members = members
    }
}

/// `PUT /admin/v1/studies/{studyId}/team`'s body: a role for the admin with this e-mail.
public struct StudyTeamGrant: Codable, Sendable {
    public var email: String
    public var role: StudyRole

    public init(email: String, role: StudyRole) {
        self.email = email
        self.role = role
    }
}

/// `POST /admin/v1/apps`'s reply: the definition, and each platform's `key:token` credential,
/// shown this once.
public struct AppCreated: Codable, Sendable {
    public var app: AppDefinition
    public var credentials: [String: String]

    public init(app: AppDefinition, credentials: [String: String]) {
        self.app = app
        self.credentials = credentials
    }
}

/// The credentials of an app's test builds, `POST /admin/v1/apps/{appId}/testing-credentials`:
/// shown once, each `key:token` for one platform. A test build is also served the app's studies
/// in testing. Issuing new ones revokes the ones before.
public struct TestingCredentials: Codable, Sendable {
    public var appId: String
    public var credentials: [String: String]

    public init(appId: String, credentials: [String: String]) {
        self.appId = appId
        self.credentials = credentials
    }
}

/// A message to a study's participants, sent now: `POST /admin/v1/studies/{studyId}/notifications`.
/// Its id may be chosen, so a script can be re-run safely (a repeated id is refused).
public struct StudyMessage: Codable, Sendable, Equatable {
    public var notificationId: String?
    /// The study's name when left out.
    public var title: LocalizedText?
    public var text: LocalizedText

    public init(notificationId: String? = nil, title: LocalizedText? = nil, text: LocalizedText) {
        self.notificationId = notificationId
        self.title = title
        self.text = text
    }
}

/// The notifications of one study (its own, its lifecycle messages and its admins' messages),
/// newest first: `GET /admin/v1/studies/{studyId}/notifications`.
public struct StudyNotificationList: Codable, Sendable, Equatable {
    public var notifications: [AppNotificationRecord]

    public init(notifications: [AppNotificationRecord]) {
        self.notifications = notifications
    }
}

/// Who a study message reaches, as the registration service counts them now
/// (`GET /admin/v1/studies/{studyId}/audience`): the participants who have joined the study (not
/// yet to join, withdrawn or not eligible excluded), and the devices of theirs that take
/// notifications (signed in, with a push token, notifications switched on). Every participant
/// who joined also finds the message in the app's notification list.
public struct StudyAudience: Codable, Sendable, Equatable {
    public var participants: Int
    public var devices: Int

    public init(participants: Int, devices: Int) {
        self.participants = participants
        self.devices = devices
    }
}

/// One notification of an app, as `GET /admin/v1/apps/{appId}/notifications` lists it (and
/// `POST` answers for a new announcement).
public struct AppNotificationRecord: Codable, Sendable, Equatable {
    /// Where a notification comes from; it decides when it may go out.
    public enum Origin: String, Codable, Sendable {
        /// From a study document: sent only while the study is active.
        case study
        /// A lifecycle message: sent whatever the study's status.
        case lifecycle
        /// An admin's app-wide announcement.
        case announcement
        /// A study admin's message to the study's participants, sent at once; like a study's
        /// own notifications, it goes out only while the study is active.
        case message
    }

    public var id: Int64
    public var notificationId: String
    public var appId: String
    public var studyId: String?
    public var origin: Origin
    public var type: NotificationMessage.Kind
    public var subtype: String
    public var title: LocalizedText?
    public var message: LocalizedText
    public var activityId: String?
    public var resourceId: String?
    public var dueAt: Date
    public var sentAt: Date?

    public init(
        id: Int64, notificationId: String, appId: String, studyId: String?, origin: Origin, type: NotificationMessage.Kind,
        subtype: String, title: LocalizedText?, message: LocalizedText, activityId: String?, resourceId: String?, dueAt: Date,
        sentAt: Date?
    ) {
        self.id = id
        self.notificationId = notificationId
        self.appId = appId
        self.studyId = studyId
        self.origin = origin
        self.type = type
        self.subtype = subtype
        self.title = title
        self.message = message
        self.activityId = activityId
        self.resourceId = resourceId
        self.dueAt = dueAt
        self.sentAt = sentAt
    }
}

public struct AppNotificationList: Codable, Sendable {
    public var notifications: [AppNotificationRecord]

    public init(notifications: [AppNotificationRecord]) {
        self.notifications = notifications
    }
}

/// `POST /admin/v1/apps/{appId}/notifications`: an announcement to every user of the app, now
/// or at `at`.
public struct AppAnnouncement: Codable, Sendable {
    /// Defaults to a generated id; a repeated id is refused, so a script can be re-run safely.
    public var notificationId: String?
    /// Defaults to the app's name.
    public var title: LocalizedText?
    public var text: LocalizedText
    /// ISO 8601 instant with an offset (`2026-12-01T09:00:00+01:00`); absent: now.
    public var at: String?

    public init(notificationId: String?, title: LocalizedText?, text: LocalizedText, at: String?) {
        self.notificationId = notificationId
        self.title = title
        self.text = text
        self.at = at
    }
}

/// An image or PDF uploaded for a study (`POST /admin/v1/studies/{studyId}/files`), served to the
/// apps at `url` for good: a frozen version may name it.
public struct StudyFile: Codable, Sendable, Equatable {
    public var fileId: String
    public var name: String
    /// `image/png`, `image/jpeg`, `image/gif` or `application/pdf`, as the content itself shows.
    public var contentType: String
    public var bytes: Int
    public var sha256: String
    public var url: String
    public var uploadedAt: Date
    public var uploadedBy: String

    public init(
        fileId: String, name: String, contentType: String, bytes: Int, sha256: String, url: String, uploadedAt: Date, uploadedBy: String
    ) {
        self.fileId = fileId
        self.name = name
        self.contentType = contentType
        self.bytes = bytes
        self.sha256 = sha256
        self.url = url
        self.uploadedAt = uploadedAt
        self.uploadedBy = uploadedBy
    }
}

public struct StudyFileList: Codable, Sendable, Equatable {
    public var files: [StudyFile]

    public init(files: [StudyFile]) { self.files = files }
}
