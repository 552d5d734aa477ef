import ServiceKit
import StudyModels

// MARK: registration: participants, runs, sites, invitations, app accounts

extension AdminCalls {
    /// `?status=&site=&q=&after=&limit=`.
    public static let participants = AdminEndpoint<NoContent, ParticipantList>(
        .GET, "/admin/v1/studies/{studyId}/participants", on: .registration, access: .study(.viewer))
    public static let participant = AdminEndpoint<NoContent, ParticipantDetail>(
        .GET, "/admin/v1/studies/{studyId}/participants/{participantId}", on: .registration, access: .study(.viewer))
    public static let consentPDF = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/participants/{participantId}/consents/{consentId}/pdf", on: .registration,
        access: .study(.studyAdmin))
    /// The participants list's parameters (`?status=&site=&q=&appTokenSHA256=&consent=&sort=&order=&after=&limit=`).
    public static let participantsPage = AdminEndpoint<NoContent, ParticipantsPageReply>(
        .GET, "/admin/v1/studies/{studyId}/participants-page", on: .registration, access: .study(.viewer))
    /// `?participantId=` or `?appTokenSHA256=`, and `from=&to=` (the runs') and `weeks=`.
    public static let participantRecord = AdminEndpoint<NoContent, ParticipantRecordReply>(
        .GET, "/admin/v1/studies/{studyId}/participant-record", on: .registration, access: .study(.viewer))
    /// `?from=&to=` (ISO 8601 instants).
    public static let participantRuns = AdminEndpoint<NoContent, ParticipantRunsReply>(
        .GET, "/admin/v1/studies/{studyId}/participants/{participantId}/runs", on: .registration, access: .study(.viewer))
    /// `?weeks=`.
    public static let participantRunWeeks = AdminEndpoint<NoContent, ParticipantRunWeeks>(
        .GET, "/admin/v1/studies/{studyId}/participants/{participantId}/runs/weeks", on: .registration, access: .study(.viewer))
    /// `?from=&to=` (UTC days).
    public static let studyRunWeeks = AdminEndpoint<NoContent, StudyRunWeeks>(
        .GET, "/admin/v1/studies/{studyId}/runs/weeks", on: .registration, access: .study(.viewer))
    public static let participantsBehind = AdminEndpoint<NoContent, ParticipantsBehind>(
        .GET, "/admin/v1/studies/{studyId}/runs/behind", on: .registration, access: .study(.viewer))
    public static let adherence = AdminEndpoint<NoContent, ActivityAdherence>(
        .GET, "/admin/v1/studies/{studyId}/adherence", on: .registration, access: .study(.viewer))
    public static let enrollmentTimeline = AdminEndpoint<NoContent, EnrollmentTimeline>(
        .GET, "/admin/v1/studies/{studyId}/enrollment-timeline", on: .registration, access: .study(.viewer))
    public static let audience = AdminEndpoint<NoContent, StudyAudience>(
        .GET, "/admin/v1/studies/{studyId}/audience", on: .registration, access: .study(.viewer))

    /// Where the reminders to sign a changed consent stand, and how many owe a signature.
    public static let consentReminders = AdminEndpoint<NoContent, ConsentReminderSummary>(
        .GET, "/admin/v1/studies/{studyId}/consent-reminders", on: .registration, access: .study(.viewer))
    /// Reminds everyone who owes a signature (push to their devices, outside quiet hours).
    public static let remindConsent = AdminEndpoint<ConsentReminderRequest, ConsentReminderSummary>(
        .POST, "/admin/v1/studies/{studyId}/consent-reminders", on: .registration, access: .study(.studyAdmin))
    /// Every consent record of the study as CSV: who signed which version, when, and when it ended.
    public static let consentHistory = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/consent-history", on: .registration, access: .study(.viewer))

    public static let sites = AdminEndpoint<NoContent, SiteList>(
        .GET, "/admin/v1/studies/{studyId}/sites", on: .registration, access: .study(.viewer))
    public static let createSite = AdminEndpoint<SiteRequest, Site>(
        .POST, "/admin/v1/studies/{studyId}/sites", on: .registration, access: .study(.studyAdmin))
    public static let updateSite = AdminEndpoint<SiteRequest, Site>(
        .PUT, "/admin/v1/studies/{studyId}/sites/{siteId}", on: .registration, access: .study(.studyAdmin))

    /// `?status=&site=&q=&after=&limit=`.
    public static let invitations = AdminEndpoint<NoContent, InvitationList>(
        .GET, "/admin/v1/studies/{studyId}/invitations", on: .registration, access: .study(.viewer))
    public static let invite = AdminEndpoint<InvitationRequest, Invitation>(
        .POST, "/admin/v1/studies/{studyId}/invitations", on: .registration, access: .study(.studyAdmin))
    /// A CSV of invitations, all or none.
    public static let importInvitations = AdminEndpoint<CSVText, InvitationImport>(
        .POST, "/admin/v1/studies/{studyId}/invitations/import", on: .registration, access: .study(.studyAdmin))
    public static let resendInvitation = AdminEndpoint<NoContent, Invitation>(
        .POST, "/admin/v1/studies/{studyId}/invitations/{invitationId}/resend", on: .registration, access: .study(.studyAdmin))
    public static let revokeInvitation = AdminEndpoint<NoContent, Invitation>(
        .POST, "/admin/v1/studies/{studyId}/invitations/{invitationId}/revoke", on: .registration, access: .study(.studyAdmin))

    static let appAccounts = "app accounts span every study of the app: only a super-admin may read or change them"
    public static let appUsers = AdminEndpoint<NoContent, AppUserList>(
        .GET, "/admin/v1/apps/{appId}/users", on: .registration, access: .superAdmin, forbidden: appAccounts)
    public static let appUser = AdminEndpoint<NoContent, AppUserList.User>(
        .GET, "/admin/v1/apps/{appId}/users/{userId}", on: .registration, access: .superAdmin, forbidden: appAccounts)
    public static let disableAppUser = AdminEndpoint<NoContent, AppUserList.User>(
        .POST, "/admin/v1/apps/{appId}/users/{userId}/disable", on: .registration, access: .superAdmin, forbidden: appAccounts)
    public static let enableAppUser = AdminEndpoint<NoContent, AppUserList.User>(
        .POST, "/admin/v1/apps/{appId}/users/{userId}/enable", on: .registration, access: .superAdmin, forbidden: appAccounts)
    public static let unlockAppUser = AdminEndpoint<NoContent, AppUserList.User>(
        .POST, "/admin/v1/apps/{appId}/users/{userId}/unlock", on: .registration, access: .superAdmin, forbidden: appAccounts)
    public static let resendVerification = AdminEndpoint<NoContent, JSONBytes>(
        .POST, "/admin/v1/apps/{appId}/users/{userId}/verification-email", on: .registration, access: .superAdmin,
        forbidden: appAccounts)
    /// `?dryRun=`: one part of a MyStudies 2.x deployment's participants
    /// (`MyStudiesParticipantExport`) becomes the app's accounts (docs/moving-in.md); a dry run,
    /// the default, only reports.
    public static let moveInParticipants = AdminEndpoint<JSONBytes, ParticipantMoveInReport>(
        .POST, "/admin/v1/apps/{appId}/move-in/participants", on: .registration, access: .superAdmin, forbidden: appAccounts)
}

extension AdminCalls {
    /// Every admin endpoint registration answers.
    public static let registration: [any AdminEndpointDescription] = [
        participants,
        participant,
        consentPDF,
        participantsPage,
        participantRecord,
        participantRuns,
        participantRunWeeks,
        studyRunWeeks,
        participantsBehind,
        adherence,
        enrollmentTimeline,
        audience,
        consentReminders,
        remindConsent,
        consentHistory,
        sites,
        createSite,
        updateSite,
        invitations,
        invite,
        importInvitations,
        resendInvitation,
        revokeInvitation,
        appUsers,
        appUser,
        disableAppUser,
        enableAppUser,
        unlockAppUser,
        resendVerification,
        moveInParticipants,
    ]
}
