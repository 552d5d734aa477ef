import Configuration
import Foundation
import ServiceKit
import SMTPClient

/// The settings only the registration service reads, with the limits the issue sets as defaults.
public struct RegistrationSettings: Sendable {
    public enum Keys {
        public static let accessMinutes = Setting("session.accessMinutes")
        public static let refreshDays = Setting("session.refreshDays")
        public static let codeHours = Setting("codes.validHours")
        public static let invitationDays = Setting("invitations.validDays")
        public static let passwordExpiryDays = Setting("password.expiryDays")
        public static let passwordHistory = Setting("password.historyCount")
        public static let bcryptCost = Setting("password.bcryptCost")
        public static let maxFailedLogins = Setting("login.maxFailures")
        public static let lockMinutes = Setting("login.lockMinutes")
        public static let mailDirectory = Setting("mail.directory")
        public static let mailFrom = Setting("mail.from")
        public static let encryptionKey = Setting("studystack.encryptionKey", secret: true)
        public static let consentDirectory = Setting("consent.directory")
        public static let consentMaxBytes = Setting("consent.maxBytes")
        public static let mailTransport = Setting("mail.transport")
        public static let smtpHost = Setting("smtp.host")
        public static let smtpPort = Setting("smtp.port")
        public static let smtpSecurity = Setting("smtp.security")
        public static let smtpUsername = Setting("smtp.username")
        public static let smtpPassword = Setting("smtp.password", secret: true)
        public static let smtpTrustRoots = Setting("smtp.trustRootsFile")
        public static let apnsProductionURL = Setting("push.apnsProductionURL")
        public static let apnsSandboxURL = Setting("push.apnsSandboxURL")
        public static let fcmURL = Setting("push.fcmURL")
        public static let pushTrustRoots = Setting("push.trustRootsFile")
    }

    /// How e-mail leaves: `file` writes `.eml` files (local use), `smtp` sends through a server.
    public enum MailTransportKind: String, Sendable, CaseIterable {
        case file, smtp
    }

    /// How long an `auth` key lasts.
    public var accessDuration: Duration
    /// How long a refresh token lasts (each use replaces it).
    public var refreshDuration: Duration
    /// How long a verification code or temporary password can be used.
    public var codeDuration: Duration
    /// How long an invitation's enrollment token may be used (a resend starts it again).
    public var invitationDuration: Duration
    /// Age after which login answers `resetPassword: true`.
    public var passwordExpiry: Duration
    /// How many earlier passwords a new one may not repeat.
    public var passwordHistory: Int
    /// Failed logins in a row that lock the account.
    public var maxFailedLogins: Int
    public var lockDuration: Duration
    /// Where the file mail transport writes `.eml` files.
    public var mailDirectory: String
    public var mailFrom: String
    /// AES-256-GCM key (base64) for secrets at rest: queued e-mail bodies, app credentials.
    public var encryptionKey: Data
    /// bcrypt's cost for participants' passwords (and passwords moved in): 12 by default, 10 at
    /// least (each step doubles the work of a sign-in, and of a guess).
    public var bcryptCost: Int
    /// Where the filesystem consent storage keeps sealed PDFs.
    public var consentDirectory: String
    /// Largest signed consent PDF accepted.
    public var maxConsentPDFBytes: Int
    public var mailTransport: MailTransportKind
    /// The SMTP server, when `mailTransport` is `smtp`.
    public var smtp: SMTPClient.Configuration?
    /// Where APNs and FCM are (overridden only to point at a test server).
    public var apnsProductionURL: String
    public var apnsSandboxURL: String
    public var fcmURL: String
    /// Extra CA certificates (PEM) trusted for push providers, besides the system's.
    public var pushTrustRootsFile: String?

    public init(reader: ConfigReader) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        accessDuration = .seconds(60 * (try settings.integer(Keys.accessMinutes, default: 30, in: 1...1440)))
        refreshDuration = .seconds(86_400 * (try settings.integer(Keys.refreshDays, default: 30, in: 1...365)))
        codeDuration = .seconds(3600 * (try settings.integer(Keys.codeHours, default: 48, in: 1...168)))
        invitationDuration = .seconds(86_400 * (try settings.integer(Keys.invitationDays, default: 14, in: 1...365)))
        passwordExpiry = .seconds(86_400 * (try settings.integer(Keys.passwordExpiryDays, default: 90, in: 1...3650)))
        passwordHistory = try settings.integer(Keys.passwordHistory, default: 10, in: 0...50)
        bcryptCost = try settings.integer(Keys.bcryptCost, default: 12, in: 10...14)
        maxFailedLogins = try settings.integer(Keys.maxFailedLogins, default: 5, in: 1...100)
        lockDuration = .seconds(60 * (try settings.integer(Keys.lockMinutes, default: 15, in: 1...1440)))
        mailDirectory = settings.text(Keys.mailDirectory) ?? ".data/mail"
        mailFrom = settings.text(Keys.mailFrom) ?? "StudyStack <no-reply@studystack.local>"
        let keyText = try settings.requiredText(Keys.encryptionKey)
        guard let key = Data(base64Encoded: keyText), key.count == 32 else {
            throw ConfigurationError(Keys.encryptionKey, "must be 32 bytes in base64 (openssl rand -base64 32)")
        }
        encryptionKey = key
        consentDirectory = settings.text(Keys.consentDirectory) ?? ".data/consents"
        maxConsentPDFBytes = try settings.integer(Keys.consentMaxBytes, default: 5 * 1024 * 1024, in: 1024...(50 * 1024 * 1024))
        apnsProductionURL = try Self.httpsURL(settings, Keys.apnsProductionURL, default: "https://api.push.apple.com")
        apnsSandboxURL = try Self.httpsURL(settings, Keys.apnsSandboxURL, default: "https://api.sandbox.push.apple.com")
        fcmURL = try Self.httpsURL(settings, Keys.fcmURL, default: "https://fcm.googleapis.com")
        pushTrustRootsFile = settings.text(Keys.pushTrustRoots)
        if let roots = pushTrustRootsFile, !FileManager.default.isReadableFile(atPath: roots) {
            throw ConfigurationError(Keys.pushTrustRoots, "names no readable file")
        }
        mailTransport = try settings.choice(Keys.mailTransport, default: .file)
        if mailTransport == .smtp {
            let security: SMTPClient.Security = try settings.choice(Keys.smtpSecurity, default: .startTLS)
            var configuration = SMTPClient.Configuration(
                host: try settings.requiredText(Keys.smtpHost),
                port: try settings.integer(Keys.smtpPort, default: security == .tls ? 465 : 587, in: 1...65535),
                security: security, username: settings.text(Keys.smtpUsername),
                password: settings.text(Keys.smtpPassword), trustRootsFile: settings.text(Keys.smtpTrustRoots))
            if configuration.username != nil, configuration.password == nil {
                throw ConfigurationError(Keys.smtpPassword, "is required when SMTP_USERNAME is set")
            }
            if configuration.username != nil, security == .none {
                throw ConfigurationError(Keys.smtpSecurity, "must be starttls or tls when credentials are set")
            }
            if let roots = configuration.trustRootsFile, !FileManager.default.isReadableFile(atPath: roots) {
                throw ConfigurationError(Keys.smtpTrustRoots, "names no readable file")
            }
            configuration.heloName = ProcessInfo.processInfo.hostName
            smtp = configuration
        }
    }

    /// Push providers are only ever reached over TLS.
    package static func httpsURL(_ settings: SettingsReader, _ setting: Setting, default fallback: String) throws(ConfigurationError)
        -> String
    {
        var text = settings.text(setting) ?? fallback
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
            throw ConfigurationError(setting, "must be an https:// URL")
        }
        return text
    }
}
