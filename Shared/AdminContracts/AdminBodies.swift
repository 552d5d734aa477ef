import Foundation
import NIOCore
import ServiceKit
import StudyModels

/// A CSV body (invitations, participant properties), sent as the text it is.
public struct CSVText: InternalPayload, Equatable {
    public var text: String
    public init(_ text: String) { self.text = text }
    public static var contentType: String? { "text/csv" }
    public func wireBytes() throws -> [UInt8] { Array(text.utf8) }
    public static func fromWire(_ bytes: ByteBuffer) throws -> CSVText { CSVText(String(buffer: bytes)) }
}

/// A forwarding target as the admin API takes it: `type` and the fields of that type, one JSON
/// object of strings.
public struct ForwardingSettings: InternalPayload, Codable, Equatable {
    public var fields: [String: String]
    public init(_ fields: [String: String]) { self.fields = fields }
    public init(from decoder: any Decoder) throws { fields = try decoder.singleValueContainer().decode([String: String].self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }
}

/// `POST .../token-batches`: how many enrollment tokens to make.
public struct TokenBatchRequest: InternalPayload, Codable, Equatable {
    public var count: Int
    public init(count: Int) { self.count = count }
}

// The admin API's bodies and replies travel in the internal API's JSON form (`InternalCoding`); the
// push credential summaries already do, as internal replies (InternalContracts).
extension AdminSignIn: InternalPayload {}
extension AdminSignedIn: InternalPayload {}
extension AdminProfile: InternalPayload {}
extension AdminInvitationAcceptance: InternalPayload {}
extension AdminAccountList: InternalPayload {}
extension AdminInvite: InternalPayload {}
extension AdminInvited: InternalPayload {}
extension StudyTeam: InternalPayload {}
extension StudyTeamGrant: InternalPayload {}
extension AuditLog.EventList: InternalPayload {}
extension APIKeyList: InternalPayload {}
extension APIKeyRequest: InternalPayload {}
extension APIKeyCreated: InternalPayload {}
extension StudyList: InternalPayload {}
extension StudySummary: InternalPayload {}
extension DraftSaved: InternalPayload {}
extension AssessmentImportResult: InternalPayload {}
extension StudyActionResult: InternalPayload {}
extension StudyVersionList: InternalPayload {}
extension StorageCheckReply: InternalPayload {}
extension StudyFileList: InternalPayload {}
extension StudyChecklistState: InternalPayload {}
extension StudyChecklistTicks: InternalPayload {}
extension StudyFile: InternalPayload {}
extension SchemaImportResult: InternalPayload {}
extension StudyMoveInReport: InternalPayload {}
extension ParticipantMoveInReport: InternalPayload {}
extension ResponseMoveInReport: InternalPayload {}
extension SchemaStudyInfo: InternalPayload {}
extension AppList: InternalPayload {}
extension AppCreated: InternalPayload {}
extension TestingCredentials: InternalPayload {}
extension AppNotificationList: InternalPayload {}
extension AppAnnouncement: InternalPayload {}
extension StudyNotificationList: InternalPayload {}
extension StudyMessage: InternalPayload {}
extension ParticipantList: InternalPayload {}
extension ParticipantDetail: InternalPayload {}
extension ParticipantRunsReply: InternalPayload {}
extension ParticipantRunWeeks: InternalPayload {}
extension ParticipantsPageReply: InternalPayload {}
extension ParticipantRecordReply: InternalPayload {}
extension ParticipantDataReply: InternalPayload {}
extension StudyRunWeeks: InternalPayload {}
extension ParticipantsBehind: InternalPayload {}
extension ActivityAdherence: InternalPayload {}
extension EnrollmentTimeline: InternalPayload {}
extension StudyAudience: InternalPayload {}
extension ConsentReminderRequest: InternalPayload {}
extension ConsentReminderSummary: InternalPayload {}
extension SiteList: InternalPayload {}
extension SiteRequest: InternalPayload {}
extension Site: InternalPayload {}
extension InvitationList: InternalPayload {}
extension InvitationRequest: InternalPayload {}
extension Invitation: InternalPayload {}
extension InvitationImport: InternalPayload {}
extension AppUserList: InternalPayload {}
extension AppUserList.User: InternalPayload {}
extension ResponseTableList: InternalPayload {}
extension TableRowsPage: InternalPayload {}
extension ResponseSummaryList: InternalPayload {}
extension DailyResponses: InternalPayload {}
extension ReprocessRequest: InternalPayload {}
extension ReprocessOutcome: InternalPayload {}
extension ParticipantNumbers: InternalPayload {}
extension ForwardingView: InternalPayload {}
extension SchemaParticipantList: InternalPayload {}
extension SageArchiveList: InternalPayload {}
extension SageRefusedArchiveList: InternalPayload {}
extension SageReprocessed: InternalPayload {}
extension TokenBatchList: InternalPayload {}
extension TokenBatchCreated: InternalPayload {}
extension SMARTClientRegistration: InternalPayload {}
extension SMARTClientView: InternalPayload {}
extension SMARTClientList: InternalPayload {}
