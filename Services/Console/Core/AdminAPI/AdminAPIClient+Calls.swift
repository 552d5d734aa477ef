import Foundation
import JSONText
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// The admin API calls the console's pages make (docs/admin-api.md).
extension AdminAPIClient {
    package func signIn(email: String, password: String, forwardedFor: String?, logger: Logger) async throws(AdminAPIError) -> AdminSignedIn {
        let body = Array((try? JSONEncoder().encode(AdminSignIn(email: email, password: password))) ?? Data())
        return try await json(.POST, "/admin/v1/login", token: nil, body: body, forwardedFor: forwardedFor, as: AdminSignedIn.self, logger: logger)
    }

    /// Revokes the token at study-metadata: it stops working everywhere at once.
    package func signOut(token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.POST, "/admin/v1/logout", token: token, logger: logger)
    }

    package func me(token: String, logger: Logger) async throws(AdminAPIError) -> AdminProfile {
        try await json(.GET, "/admin/v1/me", token: token, as: AdminProfile.self, logger: logger)
    }

    package func studies(token: String, logger: Logger) async throws(AdminAPIError) -> [StudySummary] {
        try await json(.GET, "/admin/v1/studies", token: token, as: StudyList.self, logger: logger).studies
    }

    package func study(_ studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudySummary {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))", token: token, as: StudySummary.self, logger: logger)
    }

    package func apps(token: String, logger: Logger) async throws(AdminAPIError) -> [AppDefinition] {
        try await json(.GET, "/admin/v1/apps", token: token, as: AppList.self, logger: logger).apps
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
        let reply = try await send(.GET, "/admin/v1/studies/\(Self.segment(studyId))/draft", token: token, logger: logger)
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
        let reply = try await send(
            .PUT, "/admin/v1/studies/\(Self.segment(studyId))/draft", token: token,
            body: Array(document.serialized(sortedKeys: false).utf8), headers: header, logger: logger)
        guard let saved = try? Self.decoder.decode(DraftSaved.self, from: Data(buffer: reply.body)) else {
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "study-metadata answered something unexpected")
        }
        return saved
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
    package func perform(_ action: String, on studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudyActionResult {
        try await json(
            .POST, "/admin/v1/studies/\(Self.segment(studyId))/\(Self.segment(action))", token: token, as: StudyActionResult.self,
            logger: logger)
    }

    /// What keeps the draft's answers from being stored (study-metadata's storage check).
    package func storageCheck(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [ValidationProblem] {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))/storage-check", token: token, as: StorageCheckReply.self, logger: logger)
            .problems
    }

    package func versions(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyVersionRecord] {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))/versions", token: token, as: StudyVersionList.self, logger: logger)
            .versions
    }
}

// Accounts, a study's team and the audit log.
extension AdminAPIClient {
    package func admins(token: String, logger: Logger) async throws(AdminAPIError) -> [AdminAccount] {
        try await json(.GET, "/admin/v1/admins", token: token, as: AdminAccountList.self, logger: logger).admins
    }

    package func invite(_ invite: AdminInvite, token: String, logger: Logger) async throws(AdminAPIError) -> AdminInvited {
        let body = Array((try? JSONEncoder().encode(invite)) ?? Data())
        return try await json(.POST, "/admin/v1/admins", token: token, body: body, as: AdminInvited.self, logger: logger)
    }

    package func acceptInvitation(_ acceptance: AdminInvitationAcceptance, forwardedFor: String?, logger: Logger) async throws(AdminAPIError) {
        let body = Array((try? JSONEncoder().encode(acceptance)) ?? Data())
        _ = try await send(.POST, "/admin/v1/invitations/accept", token: nil, body: body, forwardedFor: forwardedFor, logger: logger)
    }

    package func team(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyTeamMember] {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))/team", token: token, as: StudyTeam.self, logger: logger).members
    }

    package func grant(_ grant: StudyTeamGrant, on studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        let body = Array((try? JSONEncoder().encode(grant)) ?? Data())
        _ = try await send(.PUT, "/admin/v1/studies/\(Self.segment(studyId))/team", token: token, body: body, logger: logger)
    }

    package func revoke(_ adminId: UUID, on studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.DELETE, "/admin/v1/studies/\(Self.segment(studyId))/roles/\(adminId.uuidString)", token: token, logger: logger)
    }

    package func audit(of studyId: String, limit: Int, token: String, logger: Logger) async throws(AdminAPIError) -> [AuditLog.Event] {
        try await json(
            .GET, "/admin/v1/audit?studyId=\(Self.query(studyId))&limit=\(limit)", token: token, as: AuditLog.EventList.self, logger: logger
        ).events
    }

    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }
}

// Apps and their push credentials.
extension AdminAPIClient {
    /// An app's definition as JSON (the page edits it as a document).
    package func app(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> JSONValue {
        let reply = try await send(.GET, "/admin/v1/apps/\(Self.segment(appId))", token: token, logger: logger)
        guard let definition = try? JSONValue.parse(reply.body.readableBytesView, budget: .studyDocument) else {
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "study-metadata sent an app that is not JSON")
        }
        return definition
    }

    package func createApp(_ definition: JSONValue, token: String, logger: Logger) async throws(AdminAPIError) -> AppCreated {
        try await json(.POST, "/admin/v1/apps", token: token, body: Array(definition.serialized().utf8), as: AppCreated.self, logger: logger)
    }

    package func issueTestingCredentials(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> TestingCredentials {
        try await json(
            .POST, "/admin/v1/apps/\(Self.segment(appId))/testing-credentials", token: token, body: nil, as: TestingCredentials.self,
            logger: logger)
    }

    package func updateApp(_ appId: String, _ definition: JSONValue, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.PUT, "/admin/v1/apps/\(Self.segment(appId))", token: token, body: Array(definition.serialized().utf8), logger: logger)
    }

    package func pushCredentials(_ appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [PushCredentialSummary] {
        try await json(.GET, "/admin/v1/apps/\(Self.segment(appId))/push", token: token, as: PushCredentialList.self, logger: logger).credentials
    }

    /// `platform`: `ios` (an APNs key as JSON) or `android` (the service-account file as it is).
    package func uploadPush(_ appId: String, platform: String, body: [UInt8], token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.PUT, "/admin/v1/apps/\(Self.segment(appId))/push/\(Self.segment(platform))", token: token, body: body, logger: logger)
    }

    package func removePush(_ appId: String, platform: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.DELETE, "/admin/v1/apps/\(Self.segment(appId))/push/\(Self.segment(platform))", token: token, logger: logger)
    }
}

extension AdminAPIClient {
    /// Puts an activity designed elsewhere into the draft (the admin API validates it whole).
    package func importActivity(
        _ activityId: String, into studyId: String, design: [UInt8], token: String, logger: Logger
    ) async throws(AdminAPIError) {
        _ = try await send(
            .PUT, "/admin/v1/studies/\(Self.segment(studyId))/draft/activities/\(Self.segment(activityId))", token: token, body: design,
            logger: logger)
    }
}

extension AdminAPIClient {
    package func notifications(of appId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [AppNotificationRecord] {
        try await json(.GET, "/admin/v1/apps/\(Self.segment(appId))/notifications", token: token, as: AppNotificationList.self, logger: logger)
            .notifications
    }

    package func announce(_ announcement: AppAnnouncement, in appId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        let body = Array((try? JSONEncoder().encode(announcement)) ?? Data())
        _ = try await send(.POST, "/admin/v1/apps/\(Self.segment(appId))/notifications", token: token, body: body, logger: logger)
    }

    /// The study's notifications (its own, lifecycle messages, admins' messages), newest first.
    package func notifications(ofStudy studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [AppNotificationRecord] {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))/notifications", token: token, as: StudyNotificationList.self, logger: logger).notifications
    }

    /// A message to the study's participants, now.
    package func sendMessage(_ message: StudyMessage, to studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        let body = Array((try? JSONEncoder().encode(message)) ?? Data())
        _ = try await send(.POST, "/admin/v1/studies/\(Self.segment(studyId))/notifications", token: token, body: body, logger: logger)
    }
}

/// The signed-in admin's API keys (study-metadata), for their scripts.
extension AdminAPIClient {
    package func apiKeys(token: String, logger: Logger) async throws(AdminAPIError) -> [APIKeySummary] {
        try await json(.GET, "/admin/v1/api-keys", token: token, as: APIKeyList.self, logger: logger).keys
    }

    package func createAPIKey(_ request: APIKeyRequest, token: String, logger: Logger) async throws(AdminAPIError) -> APIKeyCreated {
        try await json(.POST, "/admin/v1/api-keys", token: token, body: Self.encoded(request), as: APIKeyCreated.self, logger: logger)
    }

    package func revokeAPIKey(_ id: UUID, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await send(.DELETE, "/admin/v1/api-keys/\(id.uuidString.lowercased())", token: token, logger: logger)
    }
}

/// A study's uploaded images and PDFs.
extension AdminAPIClient {
    package func files(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [StudyFile] {
        try await json(.GET, "/admin/v1/studies/\(Self.segment(studyId))/files", token: token, as: StudyFileList.self, logger: logger).files
    }

    package func uploadFile(_ bytes: [UInt8], name: String, to studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> StudyFile
    {
        try await json(
            .POST, "/admin/v1/studies/\(Self.segment(studyId))/files" + Self.queryString([("name", name)]), token: token, body: bytes,
            as: StudyFile.self, logger: logger)
    }

    /// Where the console fetches a file to pass it on (the page's previews, under its own origin).
    package static func filePath(_ fileId: String) -> String { "/StudyMetaData/files/\(segment(fileId))" }
}
