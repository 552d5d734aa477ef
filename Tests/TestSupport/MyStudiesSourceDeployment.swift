import Crypto
import Foundation

/// A MyStudies 2.x deployment's three MySQL databases, created in a `MariaDBProcess` by the
/// release's own scripts and Flyway migrations (`Tests/Fixtures/mystudies-db`, provenance in
/// `Tests/Fixtures/PROVENANCE.md`), and filled the way its services write them: the columns each
/// service's entities set, ids from its `IdGenerator` (a UUID whose hyphens are letters), the
/// auth server's salted SHA-512 in `user_info`, signed PDFs in the consent bucket under the path
/// its consent service makes.
public struct MyStudiesSourceDeployment: Sendable {
    public static let participantDatastore = "mystudies_participant_datastore"
    public static let authServer = "oauth_server_hydra"
    public static let responseDatastore = "mystudies_response_server"

    public let server: MariaDBProcess
    /// The local copy of the consent bucket.
    public let consentBucket: URL

    /// Runs the release's scripts in the order an installation and its upgrades ran them: each
    /// database's creation script, then its Flyway migrations by version.
    public static func create(on server: MariaDBProcess) async throws -> MyStudiesSourceDeployment {
        let folder = Conformance.root.appendingPathComponent("mystudies-db")
        let scripts: [(file: String, database: String?)] = [
            ("participant-datastore-0-base.sql", nil),
            ("participant-datastore-V2_0_3__release.sql", participantDatastore),
            ("participant-datastore-V2_0_8__release.sql", participantDatastore),
            ("participant-datastore-V2_0_11__release.sql", participantDatastore),
            ("auth-server-0-base.sql", nil),
            ("response-datastore-0-base.sql", nil),
            ("response-datastore-V2_0_11__release.sql", responseDatastore),
        ]
        for script in scripts {
            let text = try String(contentsOf: folder.appendingPathComponent(script.file), encoding: .utf8)
            try await server.execute(text, database: script.database)
        }
        let bucket = FileManager.default.temporaryDirectory.appendingPathComponent("consent-bucket-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: bucket, withIntermediateDirectories: true)
        return MyStudiesSourceDeployment(server: server, consentBucket: bucket)
    }

    /// An id as the services' `IdGenerator.id()` makes one: a UUID with each hyphen replaced by
    /// a letter or digit. `seed` makes it repeatable.
    public static func id(_ seed: String) -> String {
        let digest = Array(SHA256.hash(data: Array(seed.utf8)))
        let hex = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var id = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { id.append(letters[Int(digest[16 + index / 4]) % letters.count]) }
            id.append(character)
        }
        return id
    }

    /// The auth server's password record: a random salt (the hex SHA-512 of a random id) and the
    /// hex SHA-512 of salt then password (`HashUtils` in the MyStudies sources).
    public static func passwordRecord(_ password: String, seed: String, expiresAt: Int64) -> (salt: String, hash: String, userInfo: String) {
        let salt = SHA512.hash(data: Array(id(seed).utf8)).map { String(format: "%02x", $0) }.joined()
        let hash = SHA512.hash(data: Array((salt + password).utf8)).map { String(format: "%02x", $0) }.joined()
        let entry = #"{"hash": "\#(hash)", "salt": "\#(salt)", "expire_timestamp": \#(expiresAt)}"#
        return (salt, hash, #"{"password": \#(entry), "password_history": [\#(entry)], "login_attempts": 0}"#)
    }

    // MARK: What the services insert

    /// The app as the participant datastore learns it from the study builder.
    public func insertApp(key: String, appId: String, name: String) async throws {
        try await server.execute(
            """
            INSERT INTO app_info (id, custom_app_id, app_name, created_time, app_status)
            VALUES (\(Self.literal(key)), \(Self.literal(appId)), \(Self.literal(name)), NOW(), 'Active');
            """, database: Self.participantDatastore)
    }

    /// A study with its default site, as the study builder's publish writes them.
    public func insertStudy(key: String, appKey: String, studyId: String, siteKey: String, locationKey: String, locationName: String) async throws {
        try await server.execute(
            """
            INSERT INTO study_info (id, custom_id, app_info_id, name, status, type, version, enrolling, created_time)
            VALUES (\(Self.literal(key)), \(Self.literal(studyId)), \(Self.literal(appKey)), 'Moving study', 'Active', 'CLOSE', 1.0, 'Yes', NOW());
            INSERT INTO locations (id, custom_id, name, status, is_default, created_time)
            VALUES (\(Self.literal(locationKey)), \(Self.literal(locationKey.prefix(20).description)), \(Self.literal(locationName)), 1, 'N', NOW());
            INSERT INTO sites (id, study_id, location_id, name, status, target_enrollment, created_time)
            VALUES (\(Self.literal(siteKey)), \(Self.literal(key)), \(Self.literal(locationKey)), \(Self.literal(locationName)), 1, 1500, NOW());
            """, database: Self.participantDatastore)
    }

    /// Statements that stand for what the services write; `run` sends them in one batch.
    public struct Batch: Sendable {
        public var participantDatastore: [String] = []
        public var authServer: [String] = []
        public var responseDatastore: [String] = []
        public init() {}
    }

    public func run(_ batch: Batch) async throws {
        if !batch.participantDatastore.isEmpty { try await server.execute(batch.participantDatastore.joined(separator: "\n"), database: Self.participantDatastore) }
        if !batch.authServer.isEmpty { try await server.execute(batch.authServer.joined(separator: "\n"), database: Self.authServer) }
        if !batch.responseDatastore.isEmpty { try await server.execute(batch.responseDatastore.joined(separator: "\n"), database: Self.responseDatastore) }
    }

    /// A text value as a SQL literal (test data only; the product never writes SQL this way).
    public static func literal(_ text: String?) -> String {
        guard let text else { return "NULL" }
        return "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// One participant as the deployment's services leave them: an account at the auth server and
/// the participant datastore, and optionally an invitation, an enrolment with its consent and
/// PDF, and activity states at the response datastore.
public struct MyStudiesSourceParticipant: Sendable {
    public struct Enrolment: Sendable {
        public var studyKey: String
        public var studyId: String
        public var siteKey: String
        public var participantId: String
        public var status = "enrolled"
        public var enrolledAt = "2026-10-01 09:30:00"
        public var withdrawnAt: String?
        public var dataSharing = "Provided"
        public var consentVersion = "1.0"
        /// The signed PDF's bytes, put in the bucket at the path the consent service makes; nil
        /// for a signature whose upload failed (`pdfPath` stays NULL).
        public var signedPDF: Data?
        public var studyVersion: String? = "1.0"
        /// `(activityId, version, state, runId, completed, missed, total)`.
        public var activities: [(String, String, String, String, Int, Int, Int)] = []

        public init(studyKey: String, studyId: String, siteKey: String, participantId: String) {
            self.studyKey = studyKey
            self.studyId = studyId
            self.siteKey = siteKey
            self.participantId = participantId
        }
    }

    public var seed: String
    public var appKey: String
    public var appId: String
    public var email: String
    public var password: String
    /// `user_details.status` (1 active, 4 awaiting confirmation) and the auth server's (0, 1).
    public var detailsStatus = 1
    public var authStatus = 0
    public var locale: String? = "en"
    /// The invitation its site sent (`participant_registry_site`), with its token.
    public struct Invitation: Sendable {
        public var token: String
        public var studyKey: String
        public var siteKey: String
        public init(token: String, studyKey: String, siteKey: String) {
            self.token = token
            self.studyKey = studyKey
            self.siteKey = siteKey
        }
    }
    public var invitation: Invitation?
    public var enrolment: Enrolment?

    public init(seed: String, appKey: String, appId: String, email: String, password: String) {
        self.seed = seed
        self.appKey = appKey
        self.appId = appId
        self.email = email
        self.password = password
    }

    public var userId: String { MyStudiesSourceDeployment.id("user-\(seed)") }
    public var detailsKey: String { MyStudiesSourceDeployment.id("details-\(seed)") }
    public var invitationKey: String { MyStudiesSourceDeployment.id("registry-\(seed)") }
    public var passwordRecord: (salt: String, hash: String, userInfo: String) {
        MyStudiesSourceDeployment.passwordRecord(password, seed: seed, expiresAt: 1_893_456_000_000)
    }

    /// The path the consent service stores the PDF under: `customStudyId/participantId-id/version_MMddyyyyHHmmss.pdf`.
    public var pdfPath: String? {
        guard let enrolment, enrolment.signedPDF != nil else { return nil }
        return "\(enrolment.studyId)/\(enrolment.participantId)-\(MyStudiesSourceDeployment.id("pdf-\(seed)"))/\(enrolment.consentVersion)_10012026093500.pdf"
    }

    public func add(to batch: inout MyStudiesSourceDeployment.Batch, bucket: URL) throws {
        let l = MyStudiesSourceDeployment.literal
        let record = passwordRecord
        batch.authServer.append(
            """
            INSERT INTO users (id, app_id, email, status, user_id, user_info, created)
            VALUES (\(l(MyStudiesSourceDeployment.id("auth-\(seed)"))), \(l(appId)), \(l(email)), \(authStatus), \(l(userId)), \(l(record.userInfo)), '2026-09-30 08:00:00');
            """)
        batch.participantDatastore.append(
            """
            INSERT INTO user_details (id, app_info_id, email, user_id, status, locale, verification_time, remote_notification_flag,
                local_notification_flag, touch_id, use_pass_code, reminder_lead_time)
            VALUES (\(l(detailsKey)), \(l(appKey)), \(l(email)), \(l(userId)), \(detailsStatus), \(l(locale)),
                \(detailsStatus == 1 ? "'2026-09-30 08:05:00.0'" : "NULL"), b'1', b'0', b'0', b'0', '0');
            """)
        if let invitation {
            batch.participantDatastore.append(registry(invitation, enrolled: enrolment != nil))
        }
        guard let enrolment else { return }
        let participantStudyKey = MyStudiesSourceDeployment.id("participant-study-\(seed)")
        batch.participantDatastore.append(
            """
            INSERT INTO participant_study_info (id, site_id, study_info_id, participant_id, user_details_id, participant_registry_site_id,
                status, enrolled_timestamp, withdrawal_timestamp, data_sharing_status, bookmark, eligibility, consent_status,
                completion, adherence, user_study_version, created_time)
            VALUES (\(l(participantStudyKey)), \(l(enrolment.siteKey)), \(l(enrolment.studyKey)), \(l(enrolment.participantId)), \(l(detailsKey)),
                \(invitation == nil ? "NULL" : l(invitationKey)), \(l(enrolment.status)), \(l(enrolment.enrolledAt)), \(l(enrolment.withdrawnAt)),
                \(l(enrolment.dataSharing)), b'0', b'1', b'1', 40, 80, \(l(enrolment.studyVersion)), \(l(enrolment.enrolledAt)));
            """)
        if let pdf = enrolment.signedPDF, let path = pdfPath {
            let file = path.split(separator: "/").reduce(bucket) { $0.appendingPathComponent(String($1)) }
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try pdf.write(to: file)
        }
        batch.participantDatastore.append(
            """
            INSERT INTO study_consent (id, user_details_id, study_info_id, participant_study_id, consent_date, status, version,
                pdfPath, pdfStorage, data_sharing_status, created_time)
            VALUES (\(l(MyStudiesSourceDeployment.id("consent-\(seed)"))), \(l(detailsKey)), \(l(enrolment.studyKey)), \(l(participantStudyKey)),
                '2026-10-01 09:35:00', 'completed', \(l(enrolment.consentVersion)), \(l(pdfPath)), \(pdfPath == nil ? 0 : 1),
                \(l(enrolment.dataSharing)), '2026-10-01 09:35:00');
            """)
        for (index, activity) in enrolment.activities.enumerated() {
            batch.responseDatastore.append(
                """
                INSERT INTO participant_activities (id, participant_id, study_id, activity_id, activity_version, activity_state,
                    activity_run_id, bookmark, completed_count, missed_count, total_count, created_time)
                VALUES (\(l(MyStudiesSourceDeployment.id("activity-\(seed)-\(index)"))), \(l(enrolment.participantId)), \(l(enrolment.studyId)),
                    \(l(activity.0)), \(l(activity.1)), \(l(activity.2)), \(l(activity.3)), 0, \(activity.4), \(activity.5), \(activity.6), NOW());
                """)
        }
    }

    private func registry(_ invitation: Invitation, enrolled: Bool) -> String {
        let l = MyStudiesSourceDeployment.literal
        return """
            INSERT INTO participant_registry_site (id, study_info_id, site_id, email, enrollment_token, enrollment_token_expiry,
                enrollment_token_used, onboarding_status, invitation_time, invitation_count, created_time)
            VALUES (\(l(invitationKey)), \(l(invitation.studyKey)), \(l(invitation.siteKey)), \(l(email)), \(l(invitation.token)),
                '2026-12-30 00:00:00', \(enrolled ? 1 : 0), \(enrolled ? "'E'" : "'I'"), '2026-09-29 12:00:00', 1, '2026-09-29 11:00:00');
            """
    }
}
