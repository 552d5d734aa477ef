import Foundation
import JSONText
import NIOPosix
import StudyModels

/// Reads one app's participants from a MyStudies 2.x deployment's MySQL databases (their schemas
/// are the release's Flyway migrations): the participant datastore, the auth server and the
/// response datastore. Only `SELECT`s, with fixed text; the app's rows are picked out here, not
/// in SQL, so nothing from the command line reaches the server as SQL.
///
/// Signed consent PDFs live in the deployment's consent bucket (`study_consent.pdfPath`, the
/// file's bytes as the app sent them); the reader takes them from a local copy of that bucket
/// (`gsutil rsync`), or from the table where an older deployment kept them in `pdf` (base64).
public struct MyStudiesDatabaseReader: Sendable {
    public struct Databases: Sendable {
        public var participantDatastore: String
        public var authServer: String
        public var responseDatastore: String

        /// The names the release's scripts create.
        public static let release = Databases(
            participantDatastore: "mystudies_participant_datastore", authServer: "oauth_server_hydra", responseDatastore: "mystudies_response_server")

        public init(participantDatastore: String, authServer: String, responseDatastore: String) {
            self.participantDatastore = participantDatastore
            self.authServer = authServer
            self.responseDatastore = responseDatastore
        }
    }

    /// The largest `users.user_info` read (a password history of ten entries and the session's
    /// tokens is a few kilobytes).
    static let userInfoBudget = JSONValue.Budget(maxBytes: 256 * 1024, maxNodes: 10_000, maxDepth: 16)

    public let address: MariaDBAddress
    public let databases: Databases
    public let consentFiles: URL?
    public let databaseTimeZone: String

    public init(address: MariaDBAddress, databases: Databases = .release, consentFiles: URL?, databaseTimeZone: String = "UTC") {
        self.address = address
        self.databases = databases
        self.consentFiles = consentFiles
        self.databaseTimeZone = databaseTimeZone
    }

    /// Reads the app whose id at the source is `appId`, on a thread of the blocking pool.
    public func read(appId: String, readAt: Date = Date()) async throws -> MyStudiesParticipantExport {
        try await NIOThreadPool.singleton.runIfActive { try readBlocking(appId: appId, readAt: readAt) }
    }

    func readBlocking(appId: String, readAt: Date) throws -> MyStudiesParticipantExport {
        let server = address.socket ?? "\(address.host):\(address.port)"
        var export = MyStudiesParticipantExport(
            source: "mysql://\(address.user)@\(server) (\(databases.participantDatastore), \(databases.authServer), \(databases.responseDatastore))",
            readAt: ISO8601DateFormatter().string(from: readAt), appId: appId, databaseTimeZone: databaseTimeZone)
        let participants = try MariaDBConnection(address: address, database: databases.participantDatastore)
        var datastore = ParticipantDatastoreRows(appId: ScalarKey(appId))
        try datastore.read(participants, consentFiles: consentFiles, into: &export)

        let auth = try MariaDBConnection(address: address, database: databases.authServer)
        try readPasswords(auth, appId: ScalarKey(appId), into: &export)

        let responses = try MariaDBConnection(address: address, database: databases.responseDatastore)
        try readActivityStates(responses, into: &export)
        return export
    }

    /// `users`: the account's state at the auth server and its password as `user_info` keeps it.
    private func readPasswords(_ connection: MariaDBConnection, appId: ScalarKey, into export: inout MyStudiesParticipantExport) throws {
        var byUser: [ScalarKey: Int] = [:]
        for (index, account) in export.accounts.enumerated() { byUser[ScalarKey(account.userId)] = index }
        try connection.forEachRow("SELECT user_id, app_id, status, created, user_info FROM users") { row in
            guard row.key(1) == appId, let userId = row.text(0), let index = byUser[ScalarKey(userId)] else { return }
            export.accounts[index].authStatus = row.integer(2)
            export.accounts[index].createdAt = row.text(3)
            guard let info = row.bytes(4) else { return }
            let password: JSONValue?
            do {
                password = try JSONValue.parse(info, budget: Self.userInfoBudget)["password"]
            } catch {
                export.findings.append(
                    MoveInFinding(studyId: "", at: "users#\(userId)/user_info", effect: .changed, message: "the account's user_info could not be read (\(error)); the participant will set a new password"))
                return
            }
            export.accounts[index].passwordHash = password?["hash"]?.string
            export.accounts[index].passwordSalt = password?["salt"]?.string
            export.accounts[index].passwordExpiresAt = password?["expire_timestamp"]?.integer.map { Int64($0) }
        }
    }

    /// `participant_activities`, for the participants of this app's enrolments.
    private func readActivityStates(_ connection: MariaDBConnection, into export: inout MyStudiesParticipantExport) throws {
        let participants = Set(export.enrolments.compactMap { $0.participantId.map { ScalarKey($0) } })
        try connection.forEachRow(
            """
            SELECT participant_id, study_id, activity_id, activity_version, activity_state, activity_run_id, bookmark,
                completed_count, missed_count, total_count
            FROM participant_activities
            """
        ) { row in
            guard let participantId = row.text(0), participants.contains(ScalarKey(participantId)), let studyId = row.text(1),
                let activityId = row.text(2)
            else { return }
            export.activityStates.append(
                MyStudiesParticipantExport.ActivityState(
                    participantId: participantId, studyId: studyId, activityId: activityId, activityVersion: row.text(3), state: row.text(4),
                    runId: row.text(5), bookmarked: row.flag(6), completed: row.integer(7), missed: row.integer(8), total: row.integer(9)))
        }
    }
}

/// The participant datastore's rows of one app, read table by table; each table's rows are kept
/// only when they belong to a study of the app (or, for accounts, to the app).
struct ParticipantDatastoreRows {
    let appId: ScalarKey
    private var appKey: ScalarKey?
    /// `study_info.id` → the study's id (`custom_id`).
    private var studies: [ScalarKey: String] = [:]
    /// `user_details.id` → `user_id`.
    private var users: [ScalarKey: String] = [:]

    init(appId: ScalarKey) {
        self.appId = appId
    }

    mutating func read(_ connection: MariaDBConnection, consentFiles: URL?, into export: inout MyStudiesParticipantExport) throws {
        try connection.forEachRow("SELECT id, custom_app_id FROM app_info") { row in
            if row.key(1) == appId, let key = row.text(0) { appKey = ScalarKey(key) }
        }
        guard let appKey else {
            throw MariaDBError(description: "the participant datastore has no app \(appId.text) (app_info.custom_app_id)")
        }
        try connection.forEachRow("SELECT id, custom_id, app_info_id FROM study_info") { row in
            if row.key(2) == appKey, let key = row.text(0), let studyId = row.text(1) { studies[ScalarKey(key)] = studyId }
        }
        var locations: [ScalarKey: String] = [:]
        try connection.forEachRow("SELECT id, name FROM locations") { row in
            if let key = row.text(0), let name = row.text(1) { locations[ScalarKey(key)] = name }
        }
        try connection.forEachRow("SELECT id, study_id, name, status, target_enrollment, location_id, created_time FROM sites") { row in
            guard let siteId = row.text(0), let studyId = study(row.text(1)) else { return }
            export.sites.append(
                MyStudiesParticipantExport.Site(
                    siteId: siteId, studyId: studyId, name: row.text(2), location: row.text(5).flatMap { locations[ScalarKey($0)] },
                    status: row.integer(3), targetEnrollment: row.integer(4), createdAt: row.text(6)))
        }
        try connection.forEachRow(
            """
            SELECT id, user_id, email, status, locale, verification_time, remote_notification_flag, local_notification_flag,
                reminder_lead_time, app_info_id
            FROM user_details
            """
        ) { row in
            guard row.key(9) == appKey, let key = row.text(0), let userId = row.text(1) else { return }
            users[ScalarKey(key)] = userId
            export.accounts.append(
                MyStudiesParticipantExport.Account(
                    userId: userId, email: row.text(2) ?? "", status: row.integer(3) ?? 0, locale: row.text(4), verifiedAt: row.text(5),
                    remoteNotifications: row.flag(6), localNotifications: row.flag(7), reminderLeadTime: row.text(8)))
        }
        try connection.forEachRow(
            """
            SELECT id, study_info_id, site_id, email, enrollment_token, enrollment_token_expiry, enrollment_token_used,
                onboarding_status, invitation_time, invitation_count, disabled_time, created_time
            FROM participant_registry_site
            """
        ) { row in
            guard let invitationId = row.text(0), let studyId = study(row.text(1)) else { return }
            export.invitations.append(
                MyStudiesParticipantExport.Invitation(
                    invitationId: invitationId, studyId: studyId, siteId: row.text(2), email: row.text(3), enrollmentToken: row.text(4),
                    tokenExpiresAt: row.text(5), tokenUsed: row.flag(6), onboardingStatus: row.text(7), invitedAt: row.text(8),
                    invitationCount: row.integer(9), disabledAt: row.text(10), createdAt: row.text(11)))
        }
        try readEnrolments(connection, into: &export)
        try readConsents(connection, consentFiles: consentFiles, into: &export)
    }

    /// `participant_study_info`; `user_study_version` only where the schema is 2.0.11's.
    private func readEnrolments(_ connection: MariaDBConnection, into export: inout MyStudiesParticipantExport) throws {
        let hasStudyVersion = try connection.columns(of: "participant_study_info").contains("user_study_version")
        func handle(_ row: MariaDBRow) {
            guard let userId = user(row.text(1)), let studyId = study(row.text(2)) else { return }
            export.enrolments.append(
                MyStudiesParticipantExport.Enrolment(
                    userId: userId, studyId: studyId, participantId: row.text(5), siteId: row.text(3), invitationId: row.text(4),
                    status: row.text(6), enrolledAt: row.text(7), withdrawnAt: row.text(8), dataSharing: row.text(9),
                    bookmarked: row.flag(10), eligible: row.flag(11), consented: row.flag(12), completion: row.integer(13),
                    adherence: row.integer(14), studyVersion: row.text(15)))
        }
        if hasStudyVersion {
            try connection.forEachRow(
                """
                SELECT id, user_details_id, study_info_id, site_id, participant_registry_site_id, participant_id, status,
                    enrolled_timestamp, withdrawal_timestamp, data_sharing_status, bookmark, eligibility, consent_status,
                    completion, adherence, user_study_version
                FROM participant_study_info
                """, handle)
        } else {
            try connection.forEachRow(
                """
                SELECT id, user_details_id, study_info_id, site_id, participant_registry_site_id, participant_id, status,
                    enrolled_timestamp, withdrawal_timestamp, data_sharing_status, bookmark, eligibility, consent_status,
                    completion, adherence
                FROM participant_study_info
                """, handle)
        }
    }

    /// `study_consent`, each with its PDF: from the bucket copy (`pdfStorage` 1), else the table.
    private func readConsents(_ connection: MariaDBConnection, consentFiles: URL?, into export: inout MyStudiesParticipantExport) throws {
        try connection.forEachRow(
            """
            SELECT id, user_details_id, study_info_id, version, status, consent_date, data_sharing_status, pdfStorage, pdfPath, pdf
            FROM study_consent
            """
        ) { row in
            guard let consentId = row.text(0), let userId = user(row.text(1)), let studyId = study(row.text(2)) else { return }
            var consent = MyStudiesParticipantExport.Consent(
                consentId: consentId, userId: userId, studyId: studyId, version: row.text(3), status: row.text(4), consentedAt: row.text(5),
                dataSharing: row.text(6), pdfPath: row.text(8))
            let at = "study_consent#\(consentId)"
            if row.integer(7) == 1, let path = consent.pdfPath {
                switch ConsentBucketCopy.read(path: path, under: consentFiles) {
                case .success(let bytes): consent.pdf = Data(bytes).base64EncodedString()
                case .failure(let reason):
                    export.findings.append(MoveInFinding(studyId: studyId, at: at, effect: .changed, message: "the signed PDF \(path) \(reason); the signature comes over without it"))
                }
            } else if let text = row.text(9), !text.isEmpty {
                if let bytes = Data(base64Encoded: text, options: .ignoreUnknownCharacters) {
                    consent.pdf = bytes.base64EncodedString()
                } else {
                    export.findings.append(MoveInFinding(studyId: studyId, at: at, effect: .changed, message: "the PDF kept in the table is not base64; the signature comes over without it"))
                }
            } else if consent.status == "completed" {
                export.findings.append(MoveInFinding(studyId: studyId, at: at, effect: .changed, message: "no signed PDF is kept for this signature; it comes over without one"))
            }
            export.consents.append(consent)
        }
    }

    private func study(_ key: String?) -> String? { key.flatMap { studies[ScalarKey($0)] } }
    private func user(_ key: String?) -> String? { key.flatMap { users[ScalarKey($0)] } }
}

/// The local copy of a deployment's consent bucket.
enum ConsentBucketCopy {
    /// The largest signed PDF read (the apps make them from a few pages of HTML).
    static let maxPDFBytes = 32 * 1024 * 1024

    /// The file at `path` under `folder`: a relative path that stays inside it, at most
    /// `maxPDFBytes`, starting as a PDF does. The reason otherwise, in words for the report.
    static func read(path: String, under folder: URL?) -> Result<[UInt8], Reason> {
        guard let folder else { return .failure(Reason("is in the deployment's bucket, and no copy of it was given (--consent-files)")) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !path.hasPrefix("/"), !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else {
            return .failure(Reason("is not a path inside the bucket"))
        }
        let file = parts.reduce(folder) { $0.appendingPathComponent(String($1)) }
        guard let handle = try? FileHandle(forReadingFrom: file) else { return .failure(Reason("is not in the bucket copy")) }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maxPDFBytes + 1) else { return .failure(Reason("could not be read")) }
        guard data.count <= maxPDFBytes else { return .failure(Reason("is larger than \(maxPDFBytes) bytes")) }
        guard data.starts(with: Array("%PDF-".utf8)) else { return .failure(Reason("is not a PDF")) }
        return .success(Array(data))
    }

    struct Reason: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
