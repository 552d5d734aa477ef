import Foundation

/// What an admin uploads for iOS: an APNs token-authentication key (the `.p8` file from Apple's
/// developer site) and where it may send.
public struct APNsCredentials: Codable, Sendable, Equatable {
    public enum Environment: String, Codable, Sendable {
        /// `api.push.apple.com`: App Store and TestFlight builds.
        case production
        /// `api.sandbox.push.apple.com`: development builds.
        case sandbox
    }

    /// The 10-character Apple team id (the JWT's `iss`).
    public var teamId: String
    /// The 10-character key id (the JWT header's `kid`).
    public var keyId: String
    /// The `.p8` file's text: a PKCS#8 PEM P-256 private key.
    public var privateKey: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    public var environment: Environment

    public init(teamId: String, keyId: String, privateKey: String, topic: String, environment: Environment) {
        self.teamId = teamId
        self.keyId = keyId
        self.privateKey = privateKey
        self.topic = topic
        self.environment = environment
    }
}

/// What an admin uploads for Android: the Firebase service-account JSON file, as Google's
/// console downloads it (only these fields are read).
public struct FCMServiceAccount: Codable, Sendable, Equatable {
    public var type: String?
    public var projectId: String
    public var privateKeyId: String?
    /// PEM RSA private key.
    public var privateKey: String
    public var clientEmail: String
    /// Where the signed assertion is exchanged for an access token.
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case type
        case projectId = "project_id"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    public init(
        type: String? = "service_account", projectId: String, privateKeyId: String?, privateKey: String,
        clientEmail: String, tokenURI: String
    ) {
        self.type = type
        self.projectId = projectId
        self.privateKeyId = privateKeyId
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }
}

/// What may be shown of stored push credentials: who they are and a fingerprint of the public
/// key, never the private key.
public struct PushCredentialSummary: Codable, Sendable, Equatable {
    public var platform: Platform
    /// `apns` or `fcm`.
    public var provider: String
    public var teamId: String?
    public var keyId: String?
    public var topic: String?
    public var environment: String?
    public var projectId: String?
    public var clientEmail: String?
    /// SHA-256 of the public key's DER, in hex: lets an admin check which key is in use.
    public var publicKeySHA256: String
    public var updatedAt: Date

    public init(
        platform: Platform, provider: String, teamId: String? = nil, keyId: String? = nil, topic: String? = nil,
        environment: String? = nil, projectId: String? = nil, clientEmail: String? = nil, publicKeySHA256: String,
        updatedAt: Date
    ) {
        self.platform = platform
        self.provider = provider
        self.teamId = teamId
        self.keyId = keyId
        self.topic = topic
        self.environment = environment
        self.projectId = projectId
        self.clientEmail = clientEmail
        self.publicKeySHA256 = publicKeySHA256
        self.updatedAt = updatedAt
    }
}

/// `GET` of an app's push credentials.
public struct PushCredentialList: Codable, Sendable, Equatable {
    public var credentials: [PushCredentialSummary]

    public init(credentials: [PushCredentialSummary]) {
        self.credentials = credentials
    }
}
