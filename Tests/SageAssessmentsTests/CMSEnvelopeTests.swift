import CMSEnvelope
import Foundation
import Testing
import TestSupport

/// Archives sealed by `openssl cms -encrypt` for a study's certificate, as Sage's clients seal
/// them, opened with the study's key; and what must not open.
@Suite struct CMSEnvelopeTests {
    static let pair = Result { try StudyKeyPair.generate(studyId: "SAGE") }

    @Test func whatOpenSSLSealsForTheStudyOpensWithItsKeyInEveryFormTheClientsUse() throws {
        let pair = try Self.pair.get()
        let content = Array("PK\u{3}\u{4} an archive's bytes, \u{0} and all".utf8) + (0..<5_000).map { UInt8($0 % 251) }
        let sealed = [
            try OpenSSLCMS.encrypt(content, certificatePEM: pair.certificatePEM),
            try OpenSSLCMS.encrypt(content, certificatePEM: pair.certificatePEM, pem: true),
            try OpenSSLCMS.encrypt(content, certificatePEM: pair.certificatePEM, cipher: "-aes-128-cbc"),
        ]
        #expect(sealed.count == 3)
        for envelope in sealed {
            #expect(CMSEnvelope.looksEnveloped(envelope))
            #expect(try CMSEnvelope.open(envelope, privateKeyDER: pair.privateKeyDER, certificateDER: pair.certificateDER) == content)
        }
        #expect(!CMSEnvelope.looksEnveloped(content))
        // As the clients themselves seal (`SageClientRun.seal`): iOS's CMSSupport and Android's
        // Bouncy Castle stream generator both write BER with indefinite lengths (`30 80`), the
        // ciphertext in chunks.
        let streamed = try SageClientRun.Platform.allCases.map { try SageClientRun.seal(content, for: $0, certificatePEM: pair.certificatePEM) }
        #expect(streamed.count == 2)
        for envelope in streamed {
            #expect(envelope.starts(with: [0x30, 0x80]), "not indefinite-length: \(envelope.prefix(4))")
            #expect(try CMSEnvelope.open(envelope, privateKeyDER: pair.privateKeyDER, certificateDER: pair.certificateDER) == content)
            // Cut short, the end-of-contents octets are missing: refused, not read as far as it goes.
            #expect(throws: CMSEnvelope.Failure.self) {
                try CMSEnvelope.open(Array(envelope.dropLast(40)), privateKeyDER: pair.privateKeyDER, certificateDER: pair.certificateDER)
            }
        }
        // The certificate is one openssl reads, for the app build.
        let text = try ExternalTool.run("openssl", ["x509", "-noout", "-subject"], input: Data(pair.certificatePEM.utf8))
        #expect(text.contains("CN = SAGE"))
    }

    @Test func whatIsNotSealedForThisStudyDoesNotOpen() throws {
        let pair = try Self.pair.get()
        let other = try StudyKeyPair.generate(studyId: "OTHER")
        let content = Array("archive".utf8)
        let forOther = try OpenSSLCMS.encrypt(content, certificatePEM: other.certificatePEM)
        let forStranger = try OpenSSLCMS.encrypt(content, certificatePEM: try OpenSSLCMS.strangerCertificate())
        var truncated = try OpenSSLCMS.encrypt(content, certificatePEM: pair.certificatePEM)
        truncated.removeLast(20)
        let cases: [(String, [UInt8], String)] = [
            ("sealed for another study", forOther, "cannot be opened"),
            ("sealed for a stranger", forStranger, "cannot be opened"),
            ("signed, not sealed", try OpenSSLCMS.signedData(content), "not EnvelopedData"),
            ("truncated", truncated, "not a CMS structure"),
            ("garbage", [0x30, 0x82, 0xFF, 0xFF, 1, 2, 3], "not a CMS structure"),
            ("bad armour", Array("-----BEGIN CMS-----\n!!!\n-----END CMS-----\n".utf8), "PEM armour"),
            ("empty", [], "empty"),
        ]
        #expect(cases.count == 7)
        for (name, envelope, reason) in cases {
            do {
                _ = try CMSEnvelope.open(envelope, privateKeyDER: pair.privateKeyDER, certificateDER: pair.certificateDER)
                Issue.record("\(name) opened")
            } catch {
                #expect(error.description.contains(reason), "\(name): \(error)")
            }
        }
    }
}

/// The fuzzing corpus's sealed archive opens with the fuzzing study's key (so the fuzzer explores
/// past decryption), and is a ZIP.
@Suite struct FuzzStudyKeyTests {
    @Test func theSealedSeedOpensWithTheFuzzingKey() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let key = Array(try Data(contentsOf: root.appendingPathComponent("Fixtures/fuzz-study-key/key.der")))
        let certificate = Array(try Data(contentsOf: root.appendingPathComponent("Fixtures/fuzz-study-key/certificate.der")))
        let sealed = Array(try Data(contentsOf: root.appendingPathComponent("Fuzz/Corpus/sage-archive/sealed-result.cms")))
        let opened = try CMSEnvelope.open(sealed, privateKeyDER: key, certificateDER: certificate)
        #expect(opened.starts(with: [0x50, 0x4B, 0x03, 0x04]))
    }
}
