import Configuration
import Foundation
import ServiceKit
import StudyModels

/// The settings only the study-metadata service reads.
public struct AdminSettings: Sendable {
    public enum Keys {
        /// The first super-admin, created at start when no super-admin exists.
        public static let bootstrapEmail = Setting("studystack.adminEmail")
        public static let bootstrapPassword = Setting("studystack.adminPassword", secret: true)
        public static let sessionHours = Setting("admin.sessionHours")
        public static let invitationHours = Setting("admin.invitationHours")
        public static let catalogCacheSeconds = Setting("catalog.cacheSeconds")
        public static let schemaDataURL = Setting("schema.dataURL")
        public static let schemaProtocolURL = Setting("schema.protocolURL")
    }

    public var bootstrapEmail: String?
    public var bootstrapPassword: String?
    /// How long an admin bearer token lasts.
    public var sessionDuration: Duration
    /// How long an invitation can be accepted.
    public var invitationDuration: Duration
    /// How long a replica serves the apps' catalogue from memory when no change notification
    /// reaches it (notifications normally refresh it within a second).
    public var catalogCacheDuration: Duration
    /// Where phones reach the response service: the served schema protocols' `post_url` is this
    /// followed by `/schema/{studyId}/data`. Nil: the response service's internal address.
    public var schemaDataURL: URL?
    /// Where phones reach this service: a schema study's QR code says this followed by
    /// `/schema/{studyId}/protocol`, and an uploaded file's URL is this followed by
    /// `/StudyMetaData/files/{fileId}`. Nil: this service's own address.
    public var schemaProtocolURL: URL?

    public init(reader: ConfigReader) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        bootstrapEmail = settings.text(Keys.bootstrapEmail)
        bootstrapPassword = settings.text(Keys.bootstrapPassword)
        if let email = bootstrapEmail, !EmailAddress.isPlausible(email) {
            throw ConfigurationError(Keys.bootstrapEmail, "is not an e-mail address")
        }
        if bootstrapEmail != nil, bootstrapPassword == nil {
            throw ConfigurationError(Keys.bootstrapPassword, "is required when STUDYSTACK_ADMIN_EMAIL is set")
        }
        if let password = bootstrapPassword, let problem = PasswordPolicy.problem(with: password) {
            throw ConfigurationError(Keys.bootstrapPassword, problem)
        }
        sessionDuration = .seconds(3600 * (try settings.integer(Keys.sessionHours, default: 12, in: 1...720)))
        invitationDuration = .seconds(3600 * (try settings.integer(Keys.invitationHours, default: 72, in: 1...720)))
        catalogCacheDuration = .seconds(try settings.integer(Keys.catalogCacheSeconds, default: 30, in: 1...3600))
        if settings.text(Keys.schemaProtocolURL) != nil {
            schemaProtocolURL = try settings.httpURL(Keys.schemaProtocolURL, default: URL(string: "http://127.0.0.1:8081")!)
        }
        if settings.text(Keys.schemaDataURL) != nil {
            schemaDataURL = try settings.httpURL(Keys.schemaDataURL, default: URL(string: "http://127.0.0.1:8083")!)
        }
    }
}
