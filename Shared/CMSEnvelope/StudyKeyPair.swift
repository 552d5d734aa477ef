internal import Crypto
internal import CryptoExtras
import Foundation
internal import SwiftASN1
internal import X509

/// A study's RSA key pair and self-signed X.509 certificate: the certificate goes into the app
/// build, which seals each archive for it; the private key stays with the platform.
public struct StudyKeyPair: Sendable {
    /// The private key, PKCS#8 DER.
    public var privateKeyDER: [UInt8]
    /// The certificate, DER.
    public var certificateDER: [UInt8]

    public init(privateKeyDER: [UInt8], certificateDER: [UInt8]) {
        self.privateKeyDER = privateKeyDER
        self.certificateDER = certificateDER
    }

    /// A new 2048-bit RSA key (Sage's studies use RSA key transport) and a certificate for it,
    /// named after the study, valid for `years` from now.
    public static func generate(studyId: String, organization: String = "StudyStack", years: Int = 10) throws -> StudyKeyPair {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let name = try DistinguishedName {
            OrganizationName(organization)
            CommonName(String(studyId.prefix(64)))
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(Double(years) * 365.25 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(keyEncipherment: true, dataEncipherment: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return StudyKeyPair(privateKeyDER: Array(key.pkcs8DERRepresentation), certificateDER: serializer.serializedBytes)
    }

    /// The certificate as PEM, as an app build takes it.
    public var certificatePEM: String {
        PEMDocument(type: "CERTIFICATE", derBytes: certificateDER).pemString + "\n"
    }
}
