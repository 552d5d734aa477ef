import Foundation
import JSONText

/// What one app's participants become here, read from a `MyStudiesParticipantExport`: accounts
/// with their password disposition, their standing in each study with the participant id their
/// app holds, each signature with its PDF, and each activity's state. Whatever does not map is a
/// finding located in the table and row it came from. Pure: the registration service applies it
/// (`ParticipantMoveIns`).
public struct MyStudiesParticipantPlan: Sendable, Equatable {
    public var accounts: [Account]
    public var sites: [Site] = []
    public var invitations: [Invitation] = []
    public var findings: [MoveInFinding]

    /// A study's site, with a name unique in its study (compared without case, as sites here are).
    public struct Site: Sendable, Equatable {
        public var sourceId: String
        public var studyId: String
        public var name: String
        public var location: String
        public var targetEnrollment: Int?
        public var decommissioned: Bool
        public var createdAt: Date?
    }

    /// A person a site invited, with the token their invitation e-mail holds.
    public struct Invitation: Sendable, Equatable {
        public enum State: Sendable, Equatable {
            /// Not yet used: the token keeps working here until it expires.
            case open
            /// Spent by the enrolment whose app holds `participantId`.
            case enrolled(participantId: String, at: Date?)
            /// Disabled at the source.
            case revoked(at: Date?)
        }

        public var sourceId: String
        public var studyId: String
        public var sourceSiteId: String?
        public var email: String
        /// As the participant types it and the source compared it: trimmed and upper-cased.
        public var token: String
        public var expiresAt: Date
        public var sentCount: Int
        public var lastSentAt: Date?
        public var createdAt: Date?
        public var state: State
    }

    /// How an account's password comes over.
    public enum Password: Sendable, Equatable {
        /// The auth server's salted SHA-512, checked at the next sign-in and then replaced.
        case carried(digest: String, salt: String)
        /// Not verifiable here: the first sign-in e-mails a temporary password. The reason is for
        /// the report.
        case reset(reason: String)
    }

    public struct Account: Sendable, Equatable {
        public var sourceUserId: String
        public var email: String
        public var verified: Bool
        /// The account was deleted at the source: its records come over, it cannot sign in.
        public var disabled: Bool
        public var password: Password
        /// When the source's password expires (the app then asks for a new one).
        public var passwordExpiresAt: Date?
        public var createdAt: Date?
        public var settings: UserProfileReply.Settings
        public var studies: [StudyState]
    }

    public struct StudyState: Sendable, Equatable {
        public var studyId: String
        /// The id the participant's app sends with each response (the response service's app token).
        public var participantId: String?
        /// The site at the source, when the enrolment names one.
        public var sourceSiteId: String?
        /// As this platform's study states say it: `yetToJoin`, `inProgress`, `completed`,
        /// `notEligible`, `Withdrawn`.
        public var status: String
        public var enrolledAt: Date?
        public var withdrawnAt: Date?
        /// `Provided`, `Not Provided` or `Not Applicable`, as the consent records keep it.
        public var sharing: String
        public var bookmarked: Bool
        public var completion: Int
        public var adherence: Int
        public var consents: [Consent]
        public var activities: [ActivityState]
    }

    public struct Consent: Sendable, Equatable {
        public var sourceId: String
        public var version: String
        /// `completed` or `pending`.
        public var status: String
        public var signedAt: Date?
        public var sharing: String
        public var pdf: Data?
    }

    public struct ActivityState: Sendable, Equatable {
        public var activityId: String
        public var version: String
        /// `yetToJoin`, `inProgress`, `completed`, `abandoned`.
        public var state: String
        public var runId: String
        public var bookmarked: Bool
        public var completed: Int
        public var missed: Int
        public var total: Int
    }

    /// The most a text field here holds (ids, versions, e-mail addresses).
    static let maxFieldLength = 320
    /// The largest signed PDF taken (the registration service's own limit for a consent upload).
    public static let maxPDFBytes = 16 * 1024 * 1024

    /// Reads `export`. `studiesHere` are the studies of the app already moved in (or made) here:
    /// a participant's standing in any other study is a finding, since the studies move first.
    public static func read(_ export: MyStudiesParticipantExport, studiesHere: Set<ScalarKey>) -> MyStudiesParticipantPlan {
        var findings = export.findings
        guard let zone = TimeZone(identifier: export.databaseTimeZone) else {
            findings.append(MoveInFinding(studyId: "", at: "databaseTimeZone", effect: .notImported, message: "\(export.databaseTimeZone) is not an IANA time zone"))
            return MyStudiesParticipantPlan(accounts: [], findings: findings)
        }
        let times = DatabaseTimes(zone: zone)
        var enrolments: [ScalarKey: [MyStudiesParticipantExport.Enrolment]] = [:]
        for enrolment in export.enrolments { enrolments[ScalarKey(enrolment.userId), default: []].append(enrolment) }
        var consents: [ScalarKey: [MyStudiesParticipantExport.Consent]] = [:]
        for consent in export.consents { consents[ScalarKey("\(consent.userId)\u{0}\(consent.studyId)"), default: []].append(consent) }
        var states: [ScalarKey: [MyStudiesParticipantExport.ActivityState]] = [:]
        for state in export.activityStates { states[ScalarKey("\(state.participantId)\u{0}\(state.studyId)"), default: []].append(state) }

        var accounts: [Account] = []
        var seenEmails: Set<ScalarKey> = []
        var seenUsers: Set<ScalarKey> = []
        var seenParticipants: Set<ScalarKey> = []
        for source in export.accounts {
            let at = "user_details#\(source.userId)"
            guard fits(source.userId), seenUsers.insert(ScalarKey(source.userId)).inserted else {
                findings.append(MoveInFinding(studyId: "", at: at, effect: .notImported, message: "the account's user id is empty, too long or repeated"))
                continue
            }
            let email = source.email.trimmingCharacters(in: .whitespacesAndNewlines)
            guard EmailAddress.isPlausible(email), fits(email) else {
                findings.append(MoveInFinding(studyId: "", at: at, effect: .notImported, message: "\(source.email.isEmpty ? "the account has no e-mail address" : "\(source.email) is not an e-mail address"); it cannot sign in here"))
                continue
            }
            // The registration service keys addresses in lower case (`EmailKey`).
            guard seenEmails.insert(ScalarKey(email.lowercased())).inserted else {
                findings.append(MoveInFinding(studyId: "", at: at, effect: .notImported, message: "another account of the app has the e-mail address \(email)"))
                continue
            }
            let disabled = source.status == 0 || source.status == 3 || source.authStatus == 4
            let password = password(of: source, disabled: disabled)
            if case .reset(let reason) = password, !disabled {
                findings.append(MoveInFinding(studyId: "", at: "users#\(source.userId)", effect: .changed, message: "\(reason): the first sign-in e-mails a temporary password"))
            }
            var studies: [StudyState] = []
            for enrolment in enrolments[ScalarKey(source.userId)] ?? [] {
                let at = "participant_study_info#\(source.userId)/\(enrolment.studyId)"
                guard studiesHere.contains(ScalarKey(enrolment.studyId)) else {
                    findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .notImported, message: "the study is not here: move the studies in first"))
                    continue
                }
                guard let status = status(enrolment.status) else {
                    findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .notImported, message: "the status \(enrolment.status ?? "(none)") is not one MyStudies writes"))
                    continue
                }
                var participantId = enrolment.participantId.flatMap { $0.isEmpty ? nil : $0 }
                if let id = participantId, !fits(id) || !seenParticipants.insert(ScalarKey(id)).inserted {
                    findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .changed, message: "the participant id is too long or another enrolment's; the app must enrol again"))
                    participantId = nil
                }
                if participantId == nil, status == "inProgress" || status == "completed" {
                    findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .note, message: "an enrolment without a participant id: the app will ask to enrol again"))
                }
                let sharing = sharing(enrolment.dataSharing)
                let signatures = (consents[ScalarKey("\(source.userId)\u{0}\(enrolment.studyId)")] ?? []).compactMap { consent -> Consent? in
                    let at = "study_consent#\(consent.consentId)"
                    guard let version = consent.version, fits(version), !version.isEmpty else {
                        findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .notImported, message: "a signature without a consent version"))
                        return nil
                    }
                    var pdf: Data?
                    if let text = consent.pdf {
                        if let bytes = Data(base64Encoded: text), bytes.count <= maxPDFBytes { pdf = bytes } else {
                            findings.append(MoveInFinding(studyId: enrolment.studyId, at: at, effect: .changed, message: "the signed PDF is not base64 or larger than \(maxPDFBytes) bytes; the signature comes over without it"))
                        }
                    }
                    return Consent(
                        sourceId: consent.consentId, version: version, status: consent.status == "completed" ? "completed" : "pending",
                        signedAt: consent.consentedAt.flatMap(times.instant), sharing: self.sharing(consent.dataSharing ?? enrolment.dataSharing),
                        pdf: pdf)
                }
                let activities = participantId.map { id in
                    (states[ScalarKey("\(id)\u{0}\(enrolment.studyId)")] ?? []).compactMap { state -> ActivityState? in
                        guard fits(state.activityId), let activityState = activityState(state.state) else {
                            findings.append(MoveInFinding(studyId: enrolment.studyId, at: "participant_activities#\(id)/\(state.activityId)", effect: .notImported, message: "an activity state that is not one the apps send (\(state.state ?? "none"))"))
                            return nil
                        }
                        return ActivityState(
                            activityId: state.activityId, version: String((state.activityVersion ?? "").prefix(maxFieldLength)), state: activityState,
                            runId: String((state.runId ?? "").prefix(maxFieldLength)), bookmarked: state.bookmarked ?? false,
                            completed: count(state.completed), missed: count(state.missed), total: count(state.total))
                    }
                } ?? []
                studies.append(
                    StudyState(
                        studyId: enrolment.studyId, participantId: participantId, sourceSiteId: enrolment.siteId, status: status, enrolledAt: enrolment.enrolledAt.flatMap(times.instant),
                        withdrawnAt: enrolment.withdrawnAt.flatMap(times.instant), sharing: sharing, bookmarked: enrolment.bookmarked ?? false,
                        completion: percent(enrolment.completion), adherence: percent(enrolment.adherence), consents: signatures, activities: activities))
            }
            accounts.append(
                Account(
                    sourceUserId: source.userId, email: email, verified: source.status != 4 && source.authStatus != 1, disabled: disabled,
                    password: password, passwordExpiresAt: source.passwordExpiresAt.flatMap { Int64(exactly: $0) }.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                    createdAt: source.createdAt.flatMap(times.instant), settings: settings(of: source), studies: studies))
        }
        let sites = readSites(export, studiesHere: studiesHere, times: times, findings: &findings)
        let invitations = readInvitations(export, studiesHere: studiesHere, times: times, findings: &findings)
        return MyStudiesParticipantPlan(accounts: accounts, sites: sites, invitations: invitations, findings: findings)
    }

    /// The auth server's hash, when it is the user's own password in the scheme this platform
    /// checks (`PasswordHasher`): 128 hex digits and a hex salt.
    static func password(of account: MyStudiesParticipantExport.Account, disabled: Bool) -> Password {
        if disabled { return .reset(reason: "the account was deleted at the source") }
        guard let digest = account.passwordHash, let salt = account.passwordSalt else {
            return .reset(reason: "the auth server keeps no password for the account")
        }
        // In status 3 the kept hash is of a temporary password the server e-mailed, not the participant's own.
        if account.authStatus == 3 { return .reset(reason: "the account was signing in with a temporary password") }
        let isHex: (String) -> Bool = { $0.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }
        guard digest.utf8.count == 128, isHex(digest), (1...256).contains(salt.utf8.count), isHex(salt) else {
            return .reset(reason: "the password hash is not the auth server's salted SHA-512")
        }
        return .carried(digest: digest, salt: salt)
    }

    /// MyStudies 2.x's enrolment statuses (and the LabKey era's) in this platform's words.
    static func status(_ text: String?) -> String? {
        switch text {
        case "enrolled", "inProgress": "inProgress"
        case "yetToEnroll", "yetToJoin", nil: "yetToJoin"
        case "withdrawn", "Withdrawn": "Withdrawn"
        case "notEligible": "notEligible"
        case "completed": "completed"
        default: nil
        }
    }

    static func sharing(_ text: String?) -> String {
        switch text {
        case "Provided": "Provided"
        case "Not Provided": "Not Provided"
        default: "Not Applicable"
        }
    }

    static func activityState(_ text: String?) -> String? {
        switch text {
        case "yetToJoin", "start", nil: "yetToJoin"
        case "inProgress", "resume": "inProgress"
        case "completed": "completed"
        case "abandoned", "expired", "incomplete": "abandoned"
        default: nil
        }
    }

    static func settings(of account: MyStudiesParticipantExport.Account) -> UserProfileReply.Settings {
        let lead = account.reminderLeadTime.flatMap { LocalTimes.time($0) == nil ? nil : $0 } ?? "00:00"
        return UserProfileReply.Settings(
            remoteNotifications: account.remoteNotifications ?? true, localNotifications: account.localNotifications ?? true, touchId: false,
            passcode: false, reminderLeadTime: String(lead.prefix(5)), locale: String((account.locale ?? "en").prefix(16)))
    }

    static func fits(_ text: String) -> Bool { !text.isEmpty && text.utf8.count <= maxFieldLength }
    static func count(_ value: Int?) -> Int { min(max(value ?? 0, 0), 1_000_000) }
    static func percent(_ value: Int?) -> Int { min(max(value ?? 0, 0), 100) }
}

/// MySQL `datetime` text (`yyyy-MM-dd HH:mm:ss`, with an optional fraction) read in a zone.
struct DatabaseTimes {
    let zone: TimeZone

    func instant(_ text: String) -> Date? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 19, scalars.count <= 29, scalars[10] == " " || scalars[10] == "T" else { return nil }
        guard let (year, month, day) = LocalTimes.date(String(String.UnicodeScalarView(scalars[0..<10]))),
            let seconds = LocalTimes.time(String(String.UnicodeScalarView(scalars[11..<19])))
        else { return nil }
        var fraction = 0.0
        if scalars.count > 19 {
            guard scalars[19] == ".", scalars.count > 20, scalars[20...].allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            fraction = Double("0." + String(String.UnicodeScalarView(scalars[20...]))) ?? 0
        }
        return ZoneTime.instant(day: GregorianDays.days(year: year, month: month, day: day), seconds: seconds, in: zone)
            .map { $0.addingTimeInterval(fraction) }
    }
}
