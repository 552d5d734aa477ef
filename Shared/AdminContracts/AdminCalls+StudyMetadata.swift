import InternalContracts
import ServiceKit
import StudyModels

/// Every admin API endpoint (docs/admin-api.md), defined once: the console calls them with
/// `AdminAPIClient.call`, each service mounts its own with `AdminRouter.on`, and the OpenAPI
/// coverage test checks each service's routes against them. Where a reply is JSON the console
/// does not read, or one read within a budget of its own, it is `JSONBytes`; files, CSV and
/// PDFs are `OpaqueBody`.
public enum AdminCalls {}

// MARK: study-metadata: sessions, accounts, keys

extension AdminCalls {
    public static let login = AdminEndpoint<AdminSignIn, AdminSignedIn>(
        .POST, "/admin/v1/login", on: .studyMetadata, access: .anyone)
    public static let logout = AdminEndpoint<NoContent, NoContent>(
        .POST, "/admin/v1/logout", on: .studyMetadata, access: .signedIn)
    public static let me = AdminEndpoint<NoContent, AdminProfile>(
        .GET, "/admin/v1/me", on: .studyMetadata, access: .signedIn)
    public static let acceptInvitation = AdminEndpoint<AdminInvitationAcceptance, JSONBytes>(
        .POST, "/admin/v1/invitations/accept", on: .studyMetadata, access: .anyone)

    public static let admins = AdminEndpoint<NoContent, AdminAccountList>(
        .GET, "/admin/v1/admins", on: .studyMetadata, access: .superAdmin)
    public static let inviteAdmin = AdminEndpoint<AdminInvite, AdminInvited>(
        .POST, "/admin/v1/admins", on: .studyMetadata, access: .superAdmin)
    public static let team = AdminEndpoint<NoContent, StudyTeam>(
        .GET, "/admin/v1/studies/{studyId}/team", on: .studyMetadata, access: .study(.studyAdmin))
    public static let grantByEmail = AdminEndpoint<StudyTeamGrant, JSONBytes>(
        .PUT, "/admin/v1/studies/{studyId}/team", on: .studyMetadata, access: .study(.studyAdmin))
    public static let grantRole = AdminEndpoint<JSONBytes, JSONBytes>(
        .PUT, "/admin/v1/studies/{studyId}/roles/{adminId}", on: .studyMetadata, access: .study(.studyAdmin))
    public static let revokeRole = AdminEndpoint<NoContent, NoContent>(
        .DELETE, "/admin/v1/studies/{studyId}/roles/{adminId}", on: .studyMetadata, access: .study(.studyAdmin))
    /// `?studyId=` (study admins of it) or the whole log (super-admins): the handler decides.
    public static let audit = AdminEndpoint<NoContent, AuditLog.EventList>(
        .GET, "/admin/v1/audit", on: .studyMetadata, access: .signedIn)

    public static let apiKeys = AdminEndpoint<NoContent, APIKeyList>(
        .GET, "/admin/v1/api-keys", on: .studyMetadata, access: .signedIn)
    public static let createAPIKey = AdminEndpoint<APIKeyRequest, APIKeyCreated>(
        .POST, "/admin/v1/api-keys", on: .studyMetadata, access: .signedIn)
    public static let revokeAPIKey = AdminEndpoint<NoContent, NoContent>(
        .DELETE, "/admin/v1/api-keys/{keyId}", on: .studyMetadata, access: .signedIn)
}

// MARK: study-metadata: studies, drafts, versions, files, assessments, schema protocols

extension AdminCalls {
    public static let studies = AdminEndpoint<NoContent, StudyList>(
        .GET, "/admin/v1/studies", on: .studyMetadata, access: .signedIn)
    public static let study = AdminEndpoint<NoContent, StudySummary>(
        .GET, "/admin/v1/studies/{studyId}", on: .studyMetadata, access: .study(.viewer))
    /// The draft as the document it is (read within the study document budget), with its `ETag`.
    public static let draft = AdminEndpoint<NoContent, JSONBytes>(
        .GET, "/admin/v1/studies/{studyId}/draft", on: .studyMetadata, access: .study(.viewer))
    /// A whole draft, `If-Match` its revision or `If-None-Match: *`; who may create a study or
    /// edit this one is the draft's own rule (`DraftEditing.authorize`).
    public static let saveDraft = AdminEndpoint<JSONBytes, DraftSaved>(
        .PUT, "/admin/v1/studies/{studyId}/draft", on: .studyMetadata, access: .signedIn)
    public static let importActivity = AdminEndpoint<JSONBytes, JSONBytes>(
        .PUT, "/admin/v1/studies/{studyId}/draft/activities/{activityId}", on: .studyMetadata, access: .study(.editor))
    public static let importAssessment = AdminEndpoint<JSONBytes, AssessmentImportResult>(
        .PUT, "/admin/v1/studies/{studyId}/draft/assessments/{identifier}", on: .studyMetadata, access: .study(.editor))
    public static let assessment = AdminEndpoint<NoContent, JSONBytes>(
        .GET, "/admin/v1/studies/{studyId}/assessments/{identifier}", on: .studyMetadata, access: .study(.viewer))
    /// `publish`, `unpublish`, `launch`, `publish-updates`, `pause`, `resume`, `deactivate`.
    public static let lifecycleAction = AdminEndpoint<NoContent, StudyActionResult>(
        .POST, "/admin/v1/studies/{studyId}/{action}", on: .studyMetadata, access: .study(.studyAdmin))
    public static let versions = AdminEndpoint<NoContent, StudyVersionList>(
        .GET, "/admin/v1/studies/{studyId}/versions", on: .studyMetadata, access: .study(.viewer))
    public static let version = AdminEndpoint<NoContent, JSONBytes>(
        .GET, "/admin/v1/studies/{studyId}/versions/{version}", on: .studyMetadata, access: .study(.viewer))
    public static let storageCheck = AdminEndpoint<NoContent, StorageCheckReply>(
        .GET, "/admin/v1/studies/{studyId}/storage-check", on: .studyMetadata, access: .study(.editor))
    /// The manual check-list before launch (WCP's), with who ticked each item and when.
    public static let checklist = AdminEndpoint<NoContent, StudyChecklistState>(
        .GET, "/admin/v1/studies/{studyId}/checklist", on: .studyMetadata, access: .study(.viewer))
    public static let tickChecklist = AdminEndpoint<StudyChecklistTicks, StudyChecklistState>(
        .PUT, "/admin/v1/studies/{studyId}/checklist", on: .studyMetadata, access: .study(.editor))
    public static let files = AdminEndpoint<NoContent, StudyFileList>(
        .GET, "/admin/v1/studies/{studyId}/files", on: .studyMetadata, access: .study(.viewer))
    /// `?name=`; the bytes as they are.
    public static let uploadFile = AdminEndpoint<OpaqueBody, StudyFile>(
        .POST, "/admin/v1/studies/{studyId}/files", on: .studyMetadata, access: .study(.editor))
    /// `?appId=&timeZone=&assignment=`; who may create a study or edit this one is the draft's
    /// own rule, as for `saveDraft`.
    public static let importSchema = AdminEndpoint<JSONBytes, SchemaImportResult>(
        .PUT, "/admin/v1/studies/{studyId}/imports/schema", on: .studyMetadata, access: .signedIn)
    public static let schemaInfo = AdminEndpoint<NoContent, SchemaStudyInfo>(
        .GET, "/admin/v1/studies/{studyId}/schema", on: .studyMetadata, access: .study(.viewer))
    /// `?timeZone=&dryRun=`: a MyStudies deployment's study-metadata replies (`MyStudiesStudyExport`)
    /// become the app's studies (docs/moving-in.md); a dry run, the default, only reports.
    public static let moveInStudies = AdminEndpoint<JSONBytes, StudyMoveInReport>(
        .POST, "/admin/v1/apps/{appId}/move-in/studies", on: .studyMetadata, access: .superAdmin)
}

// MARK: study-metadata: apps, push credentials, notifications

extension AdminCalls {
    public static let apps = AdminEndpoint<NoContent, AppList>(
        .GET, "/admin/v1/apps", on: .studyMetadata, access: .signedIn)
    public static let createApp = AdminEndpoint<JSONBytes, AppCreated>(
        .POST, "/admin/v1/apps", on: .studyMetadata, access: .superAdmin)
    /// The app's definition as the document the console edits.
    public static let app = AdminEndpoint<NoContent, JSONBytes>(
        .GET, "/admin/v1/apps/{appId}", on: .studyMetadata, access: .signedIn)
    public static let updateApp = AdminEndpoint<JSONBytes, JSONBytes>(
        .PUT, "/admin/v1/apps/{appId}", on: .studyMetadata, access: .superAdmin)
    public static let testingCredentials = AdminEndpoint<NoContent, TestingCredentials>(
        .POST, "/admin/v1/apps/{appId}/testing-credentials", on: .studyMetadata, access: .superAdmin)
    public static let pushCredentials = AdminEndpoint<NoContent, PushCredentialList>(
        .GET, "/admin/v1/apps/{appId}/push", on: .studyMetadata, access: .signedIn)
    /// `ios` (an APNs key as JSON) or `android` (the service-account file as it is).
    public static let uploadPush = AdminEndpoint<OpaqueBody, PushCredentialSummary>(
        .PUT, "/admin/v1/apps/{appId}/push/{platform}", on: .studyMetadata, access: .superAdmin)
    public static let removePush = AdminEndpoint<NoContent, NoContent>(
        .DELETE, "/admin/v1/apps/{appId}/push/{platform}", on: .studyMetadata, access: .superAdmin)
    public static let appNotifications = AdminEndpoint<NoContent, AppNotificationList>(
        .GET, "/admin/v1/apps/{appId}/notifications", on: .studyMetadata, access: .signedIn)
    public static let announce = AdminEndpoint<AppAnnouncement, JSONBytes>(
        .POST, "/admin/v1/apps/{appId}/notifications", on: .studyMetadata, access: .superAdmin)
    public static let studyNotifications = AdminEndpoint<NoContent, StudyNotificationList>(
        .GET, "/admin/v1/studies/{studyId}/notifications", on: .studyMetadata, access: .study(.viewer))
    public static let sendMessage = AdminEndpoint<StudyMessage, JSONBytes>(
        .POST, "/admin/v1/studies/{studyId}/notifications", on: .studyMetadata, access: .study(.studyAdmin))
    public static let outbox = AdminEndpoint<NoContent, JSONBytes>(
        .GET, "/admin/v1/outbox", on: .studyMetadata, access: .superAdmin)
}

extension AdminCalls {
    /// Every admin endpoint study-metadata answers.
    public static let studyMetadata: [any AdminEndpointDescription] = [
        login,
        logout,
        me,
        acceptInvitation,
        admins,
        inviteAdmin,
        team,
        grantByEmail,
        grantRole,
        revokeRole,
        audit,
        apiKeys,
        createAPIKey,
        revokeAPIKey,
        studies,
        study,
        draft,
        saveDraft,
        importActivity,
        importAssessment,
        assessment,
        lifecycleAction,
        versions,
        version,
        storageCheck,
        checklist,
        tickChecklist,
        files,
        uploadFile,
        importSchema, moveInStudies,
        schemaInfo,
        apps,
        createApp,
        app,
        updateApp,
        testingCredentials,
        pushCredentials,
        uploadPush,
        removePush,
        appNotifications,
        announce,
        studyNotifications,
        sendMessage,
        outbox,
    ]
}

extension AdminCalls {
    /// Every admin endpoint of every service.
    public static var all: [any AdminEndpointDescription] { studyMetadata + registration + response }
}
