import JSONText
import ServiceKit
import StudyModels

/// Every signed call one StudyStack service makes to another, defined once. The caller sends it
/// with `InternalClient.call` (or queues it with `Outbox.enqueue`), the receiver mounts it with
/// `RouterGroup.on`, and the OpenAPI coverage test checks each against the receiver's internal
/// document. Adding a call is one definition here and one handler there.
public enum InternalCalls {
    /// Every endpoint, for the coverage test and the documentation.
    public static var all: [any InternalEndpointDescription] {
        [
            studies, activity, document, versions, standing, schedule, adminSessions, apiKeys,
            notifications, invitationEnrollments, propertyDates, testingEnded, appSettings, pushCredentials,
            pushCredentialList, pushCredentialRemoval, consentRecords, consentPDF,
            studyEvents, invitationTokens, invitationRevocations, storageRehearsals, runWeeks, submissionFeed, settlementFeed,
            movedParticipants, movedInvitationTokens,
        ] + ServiceName.allCases.map { InternalEndpoints.whoami(on: $0) }
    }

    // MARK: Study-metadata answers

    /// Every published study, for a receiver's resync.
    public static let studies = InternalEndpoint<NoContent, StudyEventList>(
        .GET, "/internal/v1/studies", receiver: .studyMetadata, callers: [.response], purpose: "resyncs studies")

    /// The design of one activity version as the apps read it (every step, English texts); the
    /// version is its label or its number, the activity id as written or in any case.
    public static let activity = InternalEndpoint<NoContent, ActivityReply>(
        .GET, "/internal/v1/studies/{studyId}/activities/{activityId}/versions/{version}", receiver: .studyMetadata,
        callers: [.response], purpose: "reads activity designs",
        refusals: [
            InternalRefusal(404, "no published design of that activity at that version"),
            InternalRefusal(400, "the version is not a label"),
        ])

    /// A frozen study version's whole document.
    public static let document = InternalEndpoint<NoContent, StudyDocument>(
        .GET, "/internal/v1/studies/{studyId}/versions/{version}/document", receiver: .studyMetadata, callers: [.response],
        purpose: "reads study documents", refusals: [InternalRefusal(404, "no such published version")])

    /// Every published version of a study, oldest first, with the activity versions each held.
    public static let versions = InternalEndpoint<NoContent, StudyVersionHistory>(
        .GET, "/internal/v1/studies/{studyId}/versions", receiver: .studyMetadata, callers: [.response],
        purpose: "reads study and activity version histories", refusals: [InternalRefusal(404, "no published study by that id")])

    /// Which app a published study belongs to and its status.
    public static let standing = InternalEndpoint<NoContent, StudyStanding>(
        .GET, "/internal/v1/studies/{studyId}/standing", receiver: .studyMetadata, callers: [.registration],
        purpose: "checks the studies participants name", refusals: [InternalRefusal(404, "no published study by that id")])

    /// What one published study schedules, for registration to expand into participants' runs.
    public static let schedule = InternalEndpoint<NoContent, StudySchedule>(
        .GET, "/internal/v1/studies/{studyId}/schedule", receiver: .studyMetadata, callers: [.registration],
        purpose: "computes participants' runs", refusals: [InternalRefusal(404, "no published study by that id")])

    /// Whose an admin session token is (sent as its SHA-256, never the token).
    public static let adminSessions = InternalEndpoint<AdminSessionQuery, AdminIdentity>(
        .POST, "/internal/v1/admin-sessions/verify", receiver: .studyMetadata, callers: [.response, .registration],
        purpose: "check admin tokens", maxBody: 4096, malformedBody: #"the body must be {"tokenHash": "<64 hex characters>"}"#,
        refusals: [InternalRefusal(404, "the token is unknown, expired or revoked")])

    /// Whose an API key is (sent as its SHA-256).
    public static let apiKeys = InternalEndpoint<APIKeyQuery, AdminIdentity>(
        .POST, "/internal/v1/api-keys/verify", receiver: .studyMetadata, callers: [.response], purpose: "check API keys",
        maxBody: 4096, malformedBody: #"the body must be {"keyHash": "<64 hex characters>"}"#,
        refusals: [InternalRefusal(404, "the key is unknown, expired or revoked, or its admin is disabled")])

    // MARK: Registration answers

    /// Notifications due now, for push delivery.
    public static let notifications = InternalEndpoint<NotificationBatch, NotificationsAccepted>(
        .POST, "/internal/v1/notifications", receiver: .registration, callers: [.studyMetadata], purpose: "sends notifications",
        malformedBody: "the body is not a notification batch")

    /// An invitation's token was spent by an enrolment.
    public static let invitationEnrollments = InternalEndpoint<InvitationEnrollment, EnrollmentRecorded>(
        .POST, "/internal/v1/invitations/enrolled", receiver: .registration, callers: [.response],
        purpose: "reports spent invitation tokens", maxBody: 16 * 1024, malformedBody: "the body is not an invitation enrollment")

    /// Participants' date properties changed on the response service (they enrolled, or the team
    /// uploaded values): what anchors their schedules.
    public static let propertyDates = InternalEndpoint<PropertyDates, PropertyDatesKept>(
        .PUT, "/internal/v1/studies/{studyId}/property-dates", receiver: .registration, callers: [.response],
        purpose: "sends participants' date properties", maxBody: 4 * 1024 * 1024,
        malformedBody:
            "the body is not property dates: at most \(PropertyDates.maxParticipants) participants, each a 64-digit lowercase hex hash "
            + "and at most \(PropertyDates.maxDates) yyyy-MM-dd dates by keys of 1 to 100 characters")

    /// A study left testing: the testers' rows go.
    public static let testingEnded = InternalEndpoint<StudyTestingEnded, TestRunRemoval>(
        .POST, "/internal/v1/studies/{studyId}/testing-ended", receiver: .registration, callers: [.studyMetadata],
        purpose: "reports the end of a study's test run", maxBody: 16 * 1024,
        malformedBody: "the body is not the end of this study's test run")

    /// An app was created or changed.
    public static let appSettings = InternalEndpoint<AppSettingsSync, MessageApplied>(
        .PUT, "/internal/v1/apps/{appId}", receiver: .registration, callers: [.studyMetadata], purpose: "sends app settings",
        malformedBody: "the body is not an app settings message")

    /// One platform's push credentials, sealed for registration (`SealedBody`); the reply is a
    /// summary, never the credentials.
    public static let pushCredentials = InternalEndpoint<OpaqueBody, PushCredentialSummary>(
        .PUT, "/internal/v1/apps/{appId}/push-credentials/{platform}", receiver: .registration, callers: [.studyMetadata],
        purpose: "manages push credentials", maxBody: 64 * 1024,
        refusals: [
            InternalRefusal(422, "the credentials cannot be used (the problems in the body)"),
            InternalRefusal(400, "the body is not sealed for this path"),
        ])

    /// The summaries of an app's push credentials.
    public static let pushCredentialList = InternalEndpoint<NoContent, PushCredentialList>(
        .GET, "/internal/v1/apps/{appId}/push-credentials", receiver: .registration, callers: [.studyMetadata],
        purpose: "manages push credentials")

    /// Removes one platform's push credentials.
    public static let pushCredentialRemoval = InternalEndpoint<NoContent, NoContent>(
        .DELETE, "/internal/v1/apps/{appId}/push-credentials/{platform}", receiver: .registration, callers: [.studyMetadata],
        purpose: "manages push credentials", refusals: [InternalRefusal(404, "the app has no credentials for that platform")])

    /// A study's consent records, a page at a time or counted, for the FHIR API's `Consent`.
    public static let consentRecords = InternalEndpoint<ConsentRecordQuery, ConsentRecordPage>(
        .POST, "/internal/v1/studies/{studyId}/consent-records/search", receiver: .registration, callers: [.response],
        purpose: "reads consent records", maxBody: 256 * 1024,
        malformedBody:
            "the body is not a consent record query: a limit of 1 to \(ConsentRecordQuery.maxLimit), at most "
            + "\(ConsentRecordQuery.maxListed) ids and \(ConsentRecordQuery.maxListed) 64-digit lowercase hex hashes")

    /// The signed PDF of one consent record of the study, checked against its recorded SHA-256.
    public static let consentPDF = InternalEndpoint<NoContent, OpaqueBody>(
        .GET, "/internal/v1/studies/{studyId}/consent-records/{consentId}/pdf", receiver: .registration, callers: [.response],
        purpose: "reads consent records",
        refusals: [InternalRefusal(404, "the study has no such record linked to a participant, or it has no PDF")])

    // MARK: The response service answers

    /// A study's status or version changed.
    public static let studyEvents = InternalEndpoint<StudyEvent, MessageApplied>(
        .POST, "/internal/v1/study-events", receiver: .response, callers: [.studyMetadata], purpose: "sends study events",
        malformedBody: "the body is not a study event",
        refusals: [InternalRefusal(409, "a study of that id in another case exists")])

    /// Tokens for invitations (made, or renewed with a new expiry), or the problems of their
    /// properties (422, with the same reply, and then no token is kept).
    public static let invitationTokens = InternalEndpoint<InvitationTokenRequest, InvitationTokenReply>(
        .POST, "/internal/v1/studies/{studyId}/invitation-tokens", receiver: .response, callers: [.registration],
        purpose: "asks for invitation tokens",
        malformedBody: "the body must be 1 to \(InvitationTokenRequest.maxInvitations) invitations with distinct ids",
        answers: [200, 422], status: { $0.problems.isEmpty ? 200 : 422 },
        refusals: [InternalRefusal(404, "the study is not known to the response service")])

    /// Participants moved in from a MyStudies deployment, by the hash of the participant id their
    /// app holds; the ones already here are left as they are.
    public static let movedParticipants = InternalEndpoint<MovedParticipants, MovedParticipantsReply>(
        .POST, "/internal/v1/studies/{studyId}/moved-participants", receiver: .response, callers: [.registration],
        purpose: "moves participants in", maxBody: 1024 * 1024,
        malformedBody: "the body must be 1 to \(MovedParticipants.maxParticipants) participants with distinct lowercase SHA-256 hashes",
        refusals: [InternalRefusal(404, "the study is not known to the response service")])

    /// Invitations moved in from a MyStudies deployment with their tokens; the ones already here
    /// are left as they are. Sent after the participants who spent them.
    public static let movedInvitationTokens = InternalEndpoint<MovedInvitationTokens, MovedParticipantsReply>(
        .POST, "/internal/v1/studies/{studyId}/moved-invitation-tokens", receiver: .response, callers: [.registration],
        purpose: "moves invitations in", maxBody: 1024 * 1024,
        malformedBody: "the body must be 1 to \(MovedInvitationTokens.maxInvitations) invitations with distinct ids and tokens of 4 to 32 upper-case letters and digits",
        refusals: [InternalRefusal(404, "the study is not known to the response service")])

    /// Refuses invitations' tokens again.
    public static let invitationRevocations = InternalEndpoint<InvitationRevocation, InvitationRevocationReply>(
        .POST, "/internal/v1/studies/{studyId}/invitation-tokens/revoke", receiver: .response, callers: [.registration],
        purpose: "asks for invitation tokens", maxBody: 1024 * 1024,
        malformedBody: #"the body must be {"invitationIds": [...]} with 1 to \#(InvitationTokenRequest.maxInvitations) ids"#,
        refusals: [InternalRefusal(404, "the study is not known to the response service")])

    /// Whether the study's tables can hold a response to each activity design (JSON
    /// `{"designs": [...]}`, read within `JSONValue.Budget.storageRehearsal`), checked and rolled
    /// back.
    public static let storageRehearsals = InternalEndpoint<JSONBytes, StorageRehearsalReply>(
        .POST, "/internal/v1/studies/{studyId}/storage-rehearsals", receiver: .response, callers: [.studyMetadata],
        purpose: "checks that a study's answers can be stored", maxBody: JSONValue.Budget.storageRehearsal.maxBytes,
        malformedBody: #"the body must be {"designs": [activity designs]}"#)

    /// A participant's weeks as registration counted them.
    public static let runWeeks = InternalEndpoint<RunAdherenceUpdate, RunWeeksChanged>(
        .PUT, "/internal/v1/studies/{studyId}/run-weeks", receiver: .response, callers: [.registration],
        purpose: "sends participants' counted weeks", maxBody: 1024 * 1024,
        malformedBody:
            "the body is not a participant's run weeks: a 64-digit lowercase hex hash, at most \(RunAdherenceUpdate.maxWeeks) "
            + "weeks, each an activity id of 1 to 100 characters, a yyyy-MM-dd Monday and counts from 0 to 1000000")

    /// The responses stored after the one numbered by the `after` query parameter, a page at a time.
    public static let submissionFeed = InternalEndpoint<NoContent, SubmissionFeed>(
        .GET, "/internal/v1/submissions", receiver: .response, callers: [.registration],
        purpose: "reads the responses stored for participants' runs")

    /// The settlements numbered after the `after` query parameter: which responses could not be
    /// stored, and which were since.
    public static let settlementFeed = InternalEndpoint<NoContent, SettlementFeed>(
        .GET, "/internal/v1/submission-settlements", receiver: .response, callers: [.registration],
        purpose: "reads which responses could not be stored")
}

extension StudyEventList: InternalPayload {}
extension ActivityReply: InternalPayload {}
extension StudyDocument: InternalPayload {}
extension StudyStanding: InternalPayload {}
extension StudyVersionHistory: InternalPayload {}
extension StudySchedule: InternalPayload {}
extension AdminSessionQuery: InternalPayload {}
extension APIKeyQuery: InternalPayload {}
extension AdminIdentity: InternalPayload {}
extension NotificationBatch: InternalPayload {}
extension NotificationsAccepted: InternalPayload {}
extension InvitationEnrollment: InternalPayload {}
extension EnrollmentRecorded: InternalPayload {}
extension PropertyDates: InternalPayload {}
extension PropertyDatesKept: InternalPayload {}
extension StudyTestingEnded: InternalPayload {}
extension TestRunRemoval: InternalPayload {}
extension AppSettingsSync: InternalPayload {}
extension MessageApplied: InternalPayload {}
extension PushCredentialSummary: InternalPayload {}
extension PushCredentialList: InternalPayload {}
extension StudyEvent: InternalPayload {}
extension InvitationTokenRequest: InternalPayload {}
extension InvitationTokenReply: InternalPayload {}
extension InvitationRevocation: InternalPayload {}
extension MovedParticipants: InternalPayload {}
extension MovedParticipantsReply: InternalPayload {}
extension MovedInvitationTokens: InternalPayload {}
extension InvitationRevocationReply: InternalPayload {}
extension StorageRehearsalReply: InternalPayload {}
extension RunAdherenceUpdate: InternalPayload {}
extension RunWeeksChanged: InternalPayload {}
extension SubmissionFeed: InternalPayload {}
extension SettlementFeed: InternalPayload {}
extension ConsentRecordQuery: InternalPayload {}
extension ConsentRecordPage: InternalPayload {}
