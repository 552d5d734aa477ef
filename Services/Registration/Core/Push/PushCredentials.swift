import Crypto
import Foundation
import JWTKit
import StudyModels

/// A service account's RSA key (jwt-kit's; Crypto has an `Insecure` namespace too).
package typealias FCMSigningKey = JWTKit.Insecure.RSA.PrivateKey

/// Push credentials checked and parsed: what the senders sign with. Built from an admin's upload
/// (refused with every problem at once when it is not usable) or from the sealed stored copy.
package enum PushCredentials: Sendable {
    case apns(APNsCredentials, key: ES256PrivateKey)
    case fcm(FCMServiceAccount, key: FCMSigningKey)

    package var platform: Platform {
        switch self {
        case .apns: .ios
        case .fcm: .android
        }
    }

    /// Parses an upload for `platform`: APNs key fields for iOS, a service-account file for Android.
    package static func parse(_ body: Data, for platform: Platform) throws(PushCredentialProblems) -> PushCredentials {
        switch platform {
        case .ios:
            guard let upload = try? JSONDecoder().decode(APNsCredentials.self, from: body) else {
                throw PushCredentialProblems([.init(
                    pointer: "", message: "must be {teamId, keyId, privateKey, topic, environment: production|sandbox}")])
            }
            return try check(upload)
        case .android:
            guard let upload = try? JSONDecoder().decode(FCMServiceAccount.self, from: body) else {
                throw PushCredentialProblems([.init(
                    pointer: "",
                    message: "must be a Firebase service-account JSON file (project_id, private_key, client_email, token_uri)")])
            }
            return try check(upload)
        }
    }

    package static func check(_ upload: APNsCredentials) throws(PushCredentialProblems) -> PushCredentials {
        var problems: [ValidationProblem] = []
        let appleId = { (text: String) in text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) } }
        if !appleId(upload.teamId) { problems.append(.init(pointer: "/teamId", message: "must be the 10-character Apple team id")) }
        if !appleId(upload.keyId) { problems.append(.init(pointer: "/keyId", message: "must be the 10-character key id")) }
        if !isBundleId(upload.topic) { problems.append(.init(pointer: "/topic", message: "must be the app's bundle id")) }
        let key = try? ES256PrivateKey(pem: upload.privateKey)
        if key == nil {
            problems.append(.init(pointer: "/privateKey", message: "must be the .p8 file's text (a PEM P-256 private key)"))
        }
        guard problems.isEmpty, let key else { throw PushCredentialProblems(problems) }
        return .apns(upload, key: key)
    }

    package static func check(_ upload: FCMServiceAccount) throws(PushCredentialProblems) -> PushCredentials {
        var problems: [ValidationProblem] = []
        if let type = upload.type, type != "service_account" {
            problems.append(.init(pointer: "/type", message: "must be service_account"))
        }
        if upload.projectId.isEmpty || upload.projectId.count > 64
            || !upload.projectId.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") })
        {
            problems.append(.init(pointer: "/project_id", message: "must be a Firebase project id"))
        }
        if !EmailAddress.isPlausible(upload.clientEmail) {
            problems.append(.init(pointer: "/client_email", message: "must be the service account's e-mail"))
        }
        if let url = URL(string: upload.tokenURI), url.scheme == "https", url.host != nil {} else {
            problems.append(.init(pointer: "/token_uri", message: "must be an https:// URL"))
        }
        let key = try? FCMSigningKey(pem: upload.privateKey)
        if key == nil {
            problems.append(.init(pointer: "/private_key", message: "must be a PEM RSA private key of 2048 bits or more"))
        }
        guard problems.isEmpty, let key else { throw PushCredentialProblems(problems) }
        return .fcm(upload, key: key)
    }

    package static func isBundleId(_ text: String) -> Bool {
        (1...155).contains(text.count) && text.contains(".")
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    /// The upload as stored (sealed).
    package func encoded() throws -> Data {
        switch self {
        case .apns(let upload, _): try JSONEncoder().encode(upload)
        case .fcm(let upload, _): try JSONEncoder().encode(upload)
        }
    }

    /// What may be shown: identifiers and the public key's fingerprint.
    package func summary(updatedAt: Date) throws -> PushCredentialSummary {
        switch self {
        case .apns(let upload, _):
            let publicKey = try P256.Signing.PrivateKey(pemRepresentation: upload.privateKey).publicKey
            return PushCredentialSummary(
                platform: .ios, provider: "apns", teamId: upload.teamId, keyId: upload.keyId, topic: upload.topic,
                environment: upload.environment.rawValue,
                publicKeySHA256: SHA256.hash(data: publicKey.derRepresentation).hexString, updatedAt: updatedAt)
        case .fcm(let upload, let key):
            return PushCredentialSummary(
                platform: .android, provider: "fcm", keyId: upload.privateKeyId, projectId: upload.projectId,
                clientEmail: upload.clientEmail,
                publicKeySHA256: SHA256.hash(data: key.publicKey.derRepresentation).hexString, updatedAt: updatedAt)
        }
    }
}

/// Why an upload cannot be used, each problem located by JSON Pointer.
package struct PushCredentialProblems: Error {
    package var problems: [ValidationProblem]
    package init(_ problems: [ValidationProblem]) { self.problems = problems }
}
