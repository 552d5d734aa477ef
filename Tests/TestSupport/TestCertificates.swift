import Crypto
import Foundation
import SwiftASN1
import X509

/// A throwaway certificate authority and a server certificate it signed for `127.0.0.1` and
/// `localhost`, so tests can run real TLS servers that clients verify (instead of turning
/// verification off). The CA is written to a file for settings like `push.trustRootsFile`.
public struct TestCertificates: Sendable {
    public let caPEM: String
    public let caFile: URL
    public let serverCertificatePEM: String
    public let serverKeyPEM: String

    public static func make() throws -> TestCertificates {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("StudyStack test CA") }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: .init(caKey))
        let caPEM = try ca.serializeAsPEM().pemString
        let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-test-ca-\(UUID().uuidString).pem")
        try caPEM.write(to: caFile, atomically: true, encoding: .utf8)
        return TestCertificates(
            caPEM: caPEM, caFile: caFile, serverCertificatePEM: try server.serializeAsPEM().pemString,
            serverKeyPEM: serverKey.pemRepresentation)
    }
}
