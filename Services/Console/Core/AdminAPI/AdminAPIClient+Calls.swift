import AdminContracts
import Foundation
import JSONText
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// The admin API calls the console's pages make (docs/admin-api.md), each through its definition
/// in `AdminCalls`.
extension AdminAPIClient {
    package func signIn(email: String, password: String, forwardedFor: String?, logger: Logger) async throws(AdminAPIError) -> AdminSignedIn {
        try await call(
            AdminCalls.login, body: AdminSignIn(email: email, password: password), token: nil, forwardedFor: forwardedFor, logger: logger)
    }

    /// Revokes the token at study-metadata: it stops working everywhere at once.
    package func signOut(token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.logout, token: token, logger: logger)
    }

    package func me(token: String, logger: Logger) async throws(AdminAPIError) -> AdminProfile {
        try await call(AdminCalls.me, token: token, logger: logger)
    }

    package func studies(token: String, logger: Logger) async throws(AdminAPIError) -> [StudySummary] {
        try await call(AdminCalls.studies, token: token, logger: logger).studies
    }

    package func study(_ studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudySummary {
        try await call(AdminCalls.study, ["studyId": studyId], token: token, logger: logger)
    }

    package func apps(token: String, logger: Logger) async throws(AdminAPIError) -> [AppDefinition] {
        try await call(AdminCalls.apps, token: token, logger: logger).apps
    }

    /// A study's draft as JSON, and its revision (the reply's `ETag`). `summary`: the study's
    /// summary, just read with the same token; a draft already read at the revision it names (and
    /// saved at the same time, so a database restored to an older state is not mistaken for it) is
    /// not fetched again.
    package func draft(
        _ studyId: String, summary: StudySummary? = nil, token: String, logger: Logger
    ) async throws(AdminAPIError) -> (document: JSONValue, revision: String) {
        let known = summary.map { Self.etag($0.draftRevision) }
        let cacheKey = summary.map(Self.draftVersion(of:))
        if let known, let cacheKey, let document = drafts.value(studyId, version: cacheKey) {
            return (document, known)
        }
        let reply = try await exchange(AdminCalls.draft, ["studyId": studyId], body: NoContent(), token: token, logger: logger)
        guard let document = try? JSONValue.parse(reply.body.readableBytesView, budget: .studyDocument) else {
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "study-metadata sent a draft that is not JSON")
        }
        let etag = reply.headers.first(name: "ETag") ?? ""
        // Kept only when it is the revision the summary named (a save in between is newer).
        if let cacheKey, etag == known { drafts.keep(document, under: studyId, version: cacheKey, bytes: reply.body.readableBytes) }
        return (document, etag)
    }

    /// What a draft is kept under (`DraftCache`): the revision a study's summary names, and the
    /// time it was saved (a database restored to an older state reuses revisions).
    package static func draftVersion(of summary: StudySummary) -> String {
        "\(etag(summary.draftRevision)) \(summary.draftUpdatedAt.timeIntervalSince1970)"
    }

    /// The `ETag` study-metadata sends for a draft revision.
    package static func etag(_ revision: Int) -> String { "\"\(revision)\"" }

    /// Saves a whole draft. `precondition`: `If-Match` with the revision it was based on, or
    /// `If-None-Match: *` to create only.
    package func saveDraft(
        _ studyId: String, document: JSONValue, precondition: DraftPrecondition, token: String, logger: Logger
    ) async throws(AdminAPIError) -> DraftSaved {
        let header: [(String, String)] =
            switch precondition {
            case .revision(let etag): [("If-Match", etag)]
            case .new: [("If-None-Match", "*")]
            }
        return try await call(
            AdminCalls.saveDraft, ["studyId": studyId], body: JSONBytes(Array(document.serialized(sortedKeys: false).utf8)), token: token,
            headers: header, logger: logger)
    }

    package enum DraftPrecondition: Sendable {
        /// Only over the draft with this `ETag`.
        case revision(String)
        /// Only a study that does not exist yet.
        case new
    }
}

extension AdminAPIClient {
    /// A lifecycle action (`publish`, `launch`, ...): study-metadata decides whether it may happen.
    /// `reconsent`: the team's choice on a consent change `publish-updates` freezes.
    package func perform(
        _ action: String, on studyId: String, reconsent: Bool? = nil, token: String, logger: Logger
    ) async throws(AdminAPIError) -> StudyActionResult {
        try await call(
            AdminCalls.lifecycleAction, ["studyId": studyId, "action": action], query: reconsent.map { [("reconsent", String($0))] } ?? [],
            token: token, logger: logger)
    }

    /// A frozen version's document; nil when study-metadata sent one the study model cannot read.
    package func versionDocument(of studyId: String, version: Int, token: String, logger: Logger) async throws(AdminAPIError) -> StudyDocument? {
        let reply = try await exchange(
            AdminCalls.version, ["studyId": studyId, "version": String(version)], body: NoContent(), token: token, logger: logger)
        return try? JSONDecoder.budgeted(maxNodes: JSONValue.Budget.studyDocument.maxNodes).decode(
            StudyDocument.self, from: Data(buffer: reply.body))
    }

    /// What keeps the draft's answers from being stored (study-metadata's storage check).
    package func storageCheck(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [ValidationProblem] {
        try await call(AdminCalls.storageCheck, ["studyId": studyId], token: token, logger: logger).problems
    }

    package func versions(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyVersionRecord] {
        try await call(AdminCalls.versions, ["studyId": studyId], token: token, logger: logger).versions
    }

    /// The manual check-list before launch, with who ticked each item.
    package func checklist(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudyChecklistState {
        try await call(AdminCalls.checklist, ["studyId": studyId], token: token, logger: logger)
    }

    package func tickChecklist(_ ticked: [String], of studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> StudyChecklistState
    {
        try await call(AdminCalls.tickChecklist, ["studyId": studyId], body: StudyChecklistTicks(ticked: ticked), token: token, logger: logger)
    }
}

// Accounts, a study's team and the audit log.
extension AdminAPIClient {
    package func admins(token: String, logger: Logger) async throws(AdminAPIError) -> [AdminAccount] {
        try await call(AdminCalls.admins, token: token, logger: logger).admins
    }

    package func invite(_ invite: AdminInvite, token: String, logger: Logger) async throws(AdminAPIError) -> AdminInvited {
        try await call(AdminCalls.inviteAdmin, body: invite, token: token, logger: logger)
    }

    package func acceptInvitation(_ acceptance: AdminInvitationAcceptance, forwardedFor: String?, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.acceptInvitation, body: acceptance, token: nil, forwardedFor: forwardedFor, logger: logger)
    }

    package func team(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyTeamMember] {
        try await call(AdminCalls.team, ["studyId": studyId], token: token, logger: logger).members
    }

    package func grant(_ grant: StudyTeamGrant, on studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.grantByEmail, ["studyId": studyId], body: grant, token: token, logger: logger)
    }

    package func revoke(_ adminId: UUID, on studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.revokeRole, ["studyId": studyId, "adminId": adminId.uuidString], token: token, logger: logger)
    }

    package func audit(of studyId: String, limit: Int, token: String, logger: Logger) async throws(AdminAPIError) -> [AuditLog.Event] {
        try await call(AdminCalls.audit, query: [("studyId", studyId), ("limit", String(limit))], token: token, logger: logger).events
    }
}

// Apps and their push credentials.
extension AdminAPIClient {
    /// An app's definition as JSON (the page edits it as a document).
    package func app(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> JSONValue {
        let reply = try await exchange(AdminCalls.app, ["appId": appId], body: NoContent(), token: token, logger: logger)
        guard let definition = try? JSONValue.parse(reply.body.readableBytesView, budget: .studyDocument) else {
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "study-metadata sent an app that is not JSON")
        }
        return definition
    }

    package func createApp(_ definition: JSONValue, token: String, logger: Logger) async throws(AdminAPIError) -> AppCreated {
        try await call(AdminCalls.createApp, body: JSONBytes(Array(definition.serialized().utf8)), token: token, logger: logger)
    }

    package func issueTestingCredentials(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> TestingCredentials {
        try await call(AdminCalls.testingCredentials, ["appId": appId], token: token, logger: logger)
    }

    package func updateApp(_ appId: String, _ definition: JSONValue, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(
            AdminCalls.updateApp, ["appId": appId], body: JSONBytes(Array(definition.serialized().utf8)), token: token, logger: logger)
    }

    package func pushCredentials(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [PushCredentialSummary] {
        try await call(AdminCalls.pushCredentials, ["appId": appId], token: token, logger: logger).credentials
    }

    /// `platform`: `ios` (an APNs key as JSON) or `android` (the service-account file as it is).
    package func uploadPush(_ appId: String, platform: String, body: [UInt8], token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await exchange(
            AdminCalls.uploadPush, ["appId": appId, "platform": platform], body: OpaqueBody(body), token: token, logger: logger)
    }

    package func removePush(_ appId: String, platform: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.removePush, ["appId": appId, "platform": platform], token: token, logger: logger)
    }
}

extension AdminAPIClient {
    /// Puts an activity designed elsewhere into the draft (the admin API validates it whole).
    package func importActivity(
        _ activityId: String, into studyId: String, design: [UInt8], token: String, logger: Logger
    ) async throws(AdminAPIError) {
        _ = try await call(
            AdminCalls.importActivity, ["studyId": studyId, "activityId": activityId], body: JSONBytes(design), token: token,
            logger: logger)
    }
}

extension AdminAPIClient {
    package func notifications(of appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [AppNotificationRecord] {
        try await call(AdminCalls.appNotifications, ["appId": appId], token: token, logger: logger).notifications
    }

    package func announce(_ announcement: AppAnnouncement, in appId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.announce, ["appId": appId], body: announcement, token: token, logger: logger)
    }

    /// The study's notifications (its own, lifecycle messages, admins' messages), newest first.
    package func notifications(ofStudy studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [AppNotificationRecord] {
        try await call(AdminCalls.studyNotifications, ["studyId": studyId], token: token, logger: logger).notifications
    }

    /// A message to the study's participants, now.
    package func sendMessage(_ message: StudyMessage, to studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.sendMessage, ["studyId": studyId], body: message, token: token, logger: logger)
    }
}

/// The signed-in admin's API keys (study-metadata), for their scripts.
extension AdminAPIClient {
    package func apiKeys(token: String, logger: Logger) async throws(AdminAPIError) -> [APIKeySummary] {
        try await call(AdminCalls.apiKeys, token: token, logger: logger).keys
    }

    package func createAPIKey(_ request: APIKeyRequest, token: String, logger: Logger) async throws(AdminAPIError) -> APIKeyCreated {
        try await call(AdminCalls.createAPIKey, body: request, token: token, logger: logger)
    }

    package func revokeAPIKey(_ id: UUID, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.revokeAPIKey, ["keyId": id.uuidString.lowercased()], token: token, logger: logger)
    }
}

/// A study's uploaded images and PDFs.
extension AdminAPIClient {
    package func files(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyFile] {
        try await call(AdminCalls.files, ["studyId": studyId], token: token, logger: logger).files
    }

    package func uploadFile(_ bytes: [UInt8], name: String, to studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> StudyFile
    {
        try await call(
            AdminCalls.uploadFile, ["studyId": studyId], query: [("name", name)], body: OpaqueBody(bytes), token: token, logger: logger)
    }

    /// Where the console fetches a file to pass it on (the page's previews, under its own origin):
    /// the apps' own file address at study-metadata, not an admin endpoint.
    package static func filePath(_ fileId: String) -> String { "/StudyMetaData/files/\(segment(fileId))" }
}
