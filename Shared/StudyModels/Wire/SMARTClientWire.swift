import Foundation
import JSONText

/// `POST /admin/v1/studies/{studyId}/fhir-clients`: a SMART Backend Services client of the
/// study's FHIR API, by a name the team reads and its public key set (a JWKS).
public struct SMARTClientRegistration: Codable, Sendable, Equatable {
    public var name: String
    public var jwks: JSONValue
    /// The client receives participants' data de-identified only, and only by Bulk Data export
    /// (docs/fhir.md, De-identified export).
    public var deidentified: Bool?

    public init(name: String, jwks: JSONValue, deidentified: Bool? = nil) {
        self.name = name
        self.jwks = jwks
        self.deidentified = deidentified
    }
}

/// A registered client as the admin API shows it: its id (the `iss` and `sub` of its
/// assertions), its keys by id and algorithm, and who registered or revoked it.
public struct SMARTClientView: Codable, Sendable, Equatable {
    public var clientId: String
    public var name: String
    /// `kid (RS384)`, one per key.
    public var keys: [String]
    public var createdBy: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// The token endpoint the client asks, and names as its assertions' audience.
    public var tokenURL: String
    /// Participants' data reach it de-identified, by export only.
    public var deidentified: Bool

    public init(
        clientId: String, name: String, keys: [String], createdBy: String, createdAt: Date, revokedAt: Date?, tokenURL: String,
        deidentified: Bool
    ) {
        self.deidentified = deidentified
        self.clientId = clientId
        self.name = name
        self.keys = keys
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.tokenURL = tokenURL
    }
}

public struct SMARTClientList: Codable, Sendable, Equatable {
    public var clients: [SMARTClientView]
    public init(clients: [SMARTClientView]) { self.clients = clients }
}
