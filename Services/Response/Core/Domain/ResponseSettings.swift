import Configuration
import Foundation
import ServiceKit

/// The settings only the response service reads.
public struct ResponseSettings: Sendable {
    public enum Keys {
        public static let encryptionKey = Setting("studystack.encryptionKey", secret: true)
        public static let maxTokenBatch = Setting("tokens.maxBatch")
        public static let queryDatabaseURL = Setting("query.databaseURL", secret: true)
        public static let queryTimeout = Setting("query.timeoutMilliseconds")
        public static let queryMaxRows = Setting("query.maxRows")
        public static let queryTimeZone = Setting("query.timeZone")
        public static let queryMaxReplyBytes = Setting("query.maxReplyBytes")
        public static let queryMaxConcurrent = Setting("query.maxConcurrentPerParticipant")
        public static let researcherQueryTimeout = Setting("researcherQuery.timeoutMilliseconds")
        public static let researcherQueryMaxRows = Setting("researcherQuery.maxRows")
        public static let researcherQueryMaxReplyBytes = Setting("researcherQuery.maxReplyBytes")
        public static let researcherQueryMaxConcurrent = Setting("researcherQuery.maxConcurrentPerAdmin")
        public static let processingEnabled = Setting("processing.enabled")
        public static let processingStores = Setting("processing.stores")
        public static let forwardingAllowPrivateTargets = Setting("forwarding.allowPrivateTargets")
        public static let schemaPostsPerMinute = Setting("schema.postsPerMinute")
        public static let sageMaxArchiveBytes = Setting("sage.maxArchiveBytes")
        public static let sagePublicURL = Setting("sage.publicURL")
        public static let fhirPublicURL = Setting("fhir.publicURL")
    }

    /// AES-256 key (base64) for what is kept sealed at rest: enrollment tokens (the researcher
    /// downloads them again) and forwarding credentials; the participant-query scope key is
    /// derived from it.
    public var encryptionKey: Data
    /// Largest enrollment-token batch one request may create.
    public var maxTokenBatch: Int
    /// The role participant queries run as (`selectRows`, `executeSQL`): a login of its own,
    /// never the service's, so row-level security applies to it. Nil: those calls are refused.
    public var queryDatabase: DatabaseSettings?
    public var queryTimeout: Duration
    public var queryMaxRows: Int
    /// Largest reply a participant query may build (about, in bytes of JSON): a participant can
    /// cross-join their own rows into a reply far larger than what they uploaded.
    public var queryMaxReplyBytes: Int
    /// Queries one participant may have running at once, across replicas.
    public var queryMaxConcurrent: Int
    /// The zone dates are written in for the apps, which parse them as New York time.
    public var queryTimeZone: TimeZone
    /// The bounds of researchers' LabKey queries (an API key's), run as the same reader role:
    /// larger than a participant's, since a researcher reads a whole study, but still bounded so
    /// one script cannot hold the database.
    package var researcherQueryLimits: SandboxedQueries.Limits
    /// Whether this replica runs the processing worker. Off, it only takes submissions: a
    /// deployment can keep ingest and processing on separate replicas of the same database.
    public var processingEnabled: Bool
    /// Slices of responses this replica's processing worker stores at once, each in a transaction
    /// (and a PostgreSQL backend) of its own. One keeps a database core busy; more suit a database
    /// with cores to spare, and leave less for further replicas to add.
    public var processingStores: Int
    /// Whether forwarding may reach private, loopback and link-local addresses (and plain http to
    /// this machine). Off by default: a study admin names the target.
    public var forwardingAllowPrivateTargets: Bool
    /// The schema app's data POSTs one client address may make per minute. The app sends no
    /// credential, so this is what bounds a flood; a phone flushing its pending answers sends
    /// a few dozen at once, and a clinic's phones may share one address.
    public var schemaPostsPerMinute: Int

    /// The largest Sage result archive taken (as uploaded, sealed or not). Past the HTTP body
    /// limit (`HTTP_MAX_BODY_SIZE`) nothing is read, whatever this says.
    public var sageMaxArchiveBytes: Int
    /// The address phones reach this service at, which upload URLs of Bridge's handshake start
    /// with; nil: the service's own `RESPONSE_URL`.
    public var sagePublicURL: URL?
    /// The FHIR API's base as its clients reach it (`https://studies.example.org/fhir/r4`): the
    /// audience SMART assertions name, and the base of the ids and systems of its resources;
    /// nil: the service's own `RESPONSE_URL` followed by `/fhir/r4`.
    public var fhirPublicURL: URL?

    public init(reader: ConfigReader) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        let keyText = try settings.requiredText(Keys.encryptionKey)
        guard let key = Data(base64Encoded: keyText), key.count == 32 else {
            throw ConfigurationError(Keys.encryptionKey, "must be 32 bytes in base64 (openssl rand -base64 32)")
        }
        encryptionKey = key
        maxTokenBatch = try settings.integer(Keys.maxTokenBatch, default: 100_000, in: 1...1_000_000)
        schemaPostsPerMinute = try settings.integer(Keys.schemaPostsPerMinute, default: 600, in: 1...1_000_000)
        queryDatabase = try settings.text(Keys.queryDatabaseURL).map { (url: String) throws(ConfigurationError) in
            var database = try DatabaseSettings(url: url, setting: Keys.queryDatabaseURL)
            database.maxConnections = 10
            return database
        }
        queryTimeout = .milliseconds(try settings.integer(Keys.queryTimeout, default: 2_000, in: 100...60_000))
        queryMaxRows = try settings.integer(Keys.queryMaxRows, default: 10_000, in: 1...1_000_000)
        queryMaxReplyBytes = try settings.integer(
            Keys.queryMaxReplyBytes, default: 4 * 1024 * 1024, in: 1024...(256 * 1024 * 1024))
        queryMaxConcurrent = try settings.integer(Keys.queryMaxConcurrent, default: 2, in: 1...16)
        let zone = settings.text(Keys.queryTimeZone) ?? "America/New_York"
        guard let timeZone = TimeZone(identifier: zone) else {
            throw ConfigurationError(Keys.queryTimeZone, "must be a time zone name such as America/New_York, got \"\(zone)\"")
        }
        queryTimeZone = timeZone
        researcherQueryLimits = SandboxedQueries.Limits(
            timeout: .milliseconds(try settings.integer(Keys.researcherQueryTimeout, default: 30_000, in: 100...600_000)),
            maxRows: try settings.integer(Keys.researcherQueryMaxRows, default: 100_000, in: 1...1_000_000),
            maxReplyBytes: try settings.integer(
                Keys.researcherQueryMaxReplyBytes, default: 64 * 1024 * 1024, in: 1024...(1024 * 1024 * 1024)),
            maxConcurrent: try settings.integer(Keys.researcherQueryMaxConcurrent, default: 2, in: 1...16))
        processingEnabled = try Self.flag(settings, Keys.processingEnabled, default: true)
        processingStores = try settings.integer(Keys.processingStores, default: 1, in: 1...8)
        forwardingAllowPrivateTargets = try Self.flag(settings, Keys.forwardingAllowPrivateTargets, default: false)
        sageMaxArchiveBytes = try settings.integer(Keys.sageMaxArchiveBytes, default: 8 * 1024 * 1024, in: 1024...(100 * 1024 * 1024))
        sagePublicURL = try settings.text(Keys.sagePublicURL).map { (_: String) throws(ConfigurationError) -> URL in
            try settings.httpURL(Keys.sagePublicURL, default: URL(fileURLWithPath: "/"))
        }
        fhirPublicURL = try settings.text(Keys.fhirPublicURL).map { (_: String) throws(ConfigurationError) -> URL in
            try settings.httpURL(Keys.fhirPublicURL, default: URL(fileURLWithPath: "/"))
        }
    }

    private static func flag(_ settings: SettingsReader, _ setting: Setting, default value: Bool) throws(ConfigurationError) -> Bool {
        try settings.value(setting, default: value) { (raw: String) throws(ConfigurationError) -> Bool in
            switch raw.lowercased() {
            case "true", "on", "1", "yes": return true
            case "false", "off", "0", "no": return false
            default: throw ConfigurationError(setting, "must be true or false, got \"\(raw)\"")
            }
        }
    }
}
