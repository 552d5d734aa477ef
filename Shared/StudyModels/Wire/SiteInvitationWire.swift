import Foundation

/// A study's site (what MyStudies 2.x calls a site: a location taking part in the study), with
/// its invitations and enrollments counted unless asked without (`counts=false`).
public struct Site: Codable, Sendable, Equatable {
    public var siteId: String
    public var name: String
    public var location: String
    /// How many participants the site means to enroll, when set.
    public var targetEnrollment: Int?
    public var createdAt: Date
    /// Set when the site takes no more invitations.
    public var decommissionedAt: Date?
    /// Nil when the list was asked for without counts.
    public var counts: InvitationCounts?

    public init(
        siteId: String, name: String, location: String, targetEnrollment: Int?, createdAt: Date, decommissionedAt: Date?,
        counts: InvitationCounts?
    ) {
        self.siteId = siteId
        self.name = name
        self.location = location
        self.targetEnrollment = targetEnrollment
        self.createdAt = createdAt
        self.decommissionedAt = decommissionedAt
        self.counts = counts
    }
}

/// Invitations by state, and the participants enrolled (at a site, or in the whole study).
public struct InvitationCounts: Codable, Sendable, Equatable {
    public var invited: Int
    public var enrolled: Int
    public var withdrawn: Int
    public var revoked: Int
    public var expired: Int
    /// Participants in the study now (enrolled and not withdrawn), invited or not.
    public var participants: Int

    public init(invited: Int = 0, enrolled: Int = 0, withdrawn: Int = 0, revoked: Int = 0, expired: Int = 0, participants: Int = 0) {
        self.invited = invited
        self.enrolled = enrolled
        self.withdrawn = withdrawn
        self.revoked = revoked
        self.expired = expired
        self.participants = participants
    }
}

/// `GET /admin/v1/studies/{studyId}/sites`.
public struct SiteList: Codable, Sendable, Equatable {
    public var sites: [Site]
    /// The whole study's counts, sites or none; nil when asked for without counts.
    public var study: InvitationCounts?

    public init(sites: [Site], study: InvitationCounts?) {
        self.sites = sites
        self.study = study
    }
}

/// The body of `POST .../sites` and `PUT .../sites/{siteId}`.
public struct SiteRequest: Codable, Sendable, Equatable {
    public var name: String
    public var location: String?
    public var targetEnrollment: Int?
    /// `PUT` only: true takes the site out of use (no new invitations), false puts it back.
    public var decommissioned: Bool?

    public init(name: String, location: String? = nil, targetEnrollment: Int? = nil, decommissioned: Bool? = nil) {
        self.name = name
        self.location = location
        self.targetEnrollment = targetEnrollment
        self.decommissioned = decommissioned
    }
}

/// One invitation to join a study: its own single-use enrollment token, sent by e-mail.
public struct Invitation: Codable, Sendable, Equatable {
    public var invitationId: String
    /// Only for a study admin or a super-admin.
    public var email: String?
    public var siteId: String?
    public var siteName: String?
    /// `invited`, `enrolled`, `withdrawn`, `revoked` or `expired`.
    public var state: String
    public var createdAt: Date
    public var expiresAt: Date
    public var lastSentAt: Date
    public var sentCount: Int
    public var enrolledAt: Date?
    /// The participant who joined with it (their id in the study's participant list), once their
    /// app has reported it.
    public var participantId: String?
    /// For a study admin: whether that participant's account has the invited address (an
    /// invitation forwarded to someone else shows false).
    public var sameEmail: Bool?
    /// The SHA-256 of the participant id that participant's app holds: what finds their number
    /// in the study's data at the response service.
    public var appTokenSHA256: String?

    public init(
        invitationId: String, email: String?, siteId: String?, siteName: String?, state: String, createdAt: Date,
        expiresAt: Date, lastSentAt: Date, sentCount: Int, enrolledAt: Date?, participantId: String?, sameEmail: Bool?,
        appTokenSHA256: String? = nil
    ) {
        self.invitationId = invitationId
        self.email = email
        self.siteId = siteId
        self.siteName = siteName
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastSentAt = lastSentAt
        self.sentCount = sentCount
        self.enrolledAt = enrolledAt
        self.participantId = participantId
        self.sameEmail = sameEmail
        self.appTokenSHA256 = appTokenSHA256
    }

    /// The states an invitation can be in.
    public static let states = ["invited", "enrolled", "withdrawn", "revoked", "expired"]
}

/// `GET /admin/v1/studies/{studyId}/invitations`, a page at a time.
public struct InvitationList: Codable, Sendable, Equatable {
    public var invitations: [Invitation]
    public var next: String?
    public var identities: Bool

    public init(invitations: [Invitation], next: String?, identities: Bool) {
        self.invitations = invitations
        self.next = next
        self.identities = identities
    }
}

/// The body of `POST /admin/v1/studies/{studyId}/invitations`.
public struct InvitationRequest: Codable, Sendable, Equatable {
    public var email: String
    public var siteId: String?
    /// Participant properties by property id, as the study declares them.
    public var properties: [String: String]?

    public init(email: String, siteId: String? = nil, properties: [String: String]? = nil) {
        self.email = email
        self.siteId = siteId
        self.properties = properties
    }
}

/// `POST /admin/v1/studies/{studyId}/invitations/import` (a CSV): every line invited, or (422) none,
/// with each refused line's reason.
public struct InvitationImport: Codable, Sendable, Equatable {
    public struct Problem: Codable, Sendable, Equatable, Error {
        /// The CSV line the record starts on (the header is line 1).
        public var line: Int
        public var field: String
        public var message: String

        public init(line: Int, field: String, message: String) {
            self.line = line
            self.field = field
            self.message = message
        }
    }

    public var invited: Int
    public var invitations: [Invitation]

    public init(invited: Int, invitations: [Invitation]) {
        self.invited = invited
        self.invitations = invitations
    }
}
