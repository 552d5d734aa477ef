internal import COpenSSL
internal import SwiftASN1

/// CMS EnvelopedData (RFC 5652), as Sage's clients seal a result archive with their study's
/// certificate (`openssl cms -encrypt` makes the same), opened with the study's private key by
/// OpenSSL's libcrypto. Nothing here is parsed by hand: libcrypto reads the structure, finds the
/// recipient that matches the certificate, unwraps the content key and decrypts.
public enum CMSEnvelope {
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The most bytes an envelope is opened from: the caller bounds its body far lower, and an
    /// `Int32` length is what libcrypto's memory BIO takes.
    public static let maxInputBytes = 1 << 30

    /// Whether `bytes` look like a CMS structure (DER: a SEQUENCE; or PEM armour), rather than a
    /// ZIP archive, which starts with `PK`.
    public static func looksEnveloped(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first else { return false }
        return first == 0x30 || bytes.starts(with: Array("-----BEGIN".utf8))
    }

    /// The content of an EnvelopedData (DER or PEM), decrypted with `privateKeyDER` (PKCS#1 or
    /// PKCS#8) for the recipient `certificateDER`. Throws for anything else: a structure that is
    /// not CMS, a CMS that is not enveloped, no recipient for this certificate, a wrong key.
    public static func open(_ envelope: [UInt8], privateKeyDER: [UInt8], certificateDER: [UInt8]) throws(Failure) -> [UInt8] {
        guard !envelope.isEmpty, envelope.count <= maxInputBytes else {
            throw Failure(description: "the envelope is empty or too large")
        }
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard let key = privateKeyDER.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }) else { throw Failure(description: "the study's private key cannot be read (\(lastError()))") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = certificateDER.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }) else { throw Failure(description: "the study's certificate cannot be read (\(lastError()))") }
        defer { X509_free(certificate) }

        var der = envelope
        if envelope.starts(with: Array("-----BEGIN".utf8)) {
            guard let text = String(validating: envelope, as: UTF8.self), let document = try? PEMDocument(pemString: text) else {
                throw Failure(description: "the PEM armour cannot be read")
            }
            der = document.derBytes
        }
        let parsed = der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let input = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(input) }
            return d2i_CMS_bio(input, nil)
        }
        guard let content = parsed else { throw Failure(description: "it is not a CMS structure (\(lastError()))") }
        defer { CMS_ContentInfo_free(content) }
        let type = OBJ_obj2nid(CMS_get0_type(content))
        guard type == NID_pkcs7_enveloped || type == NID_id_smime_ct_authEnvelopedData else {
            throw Failure(description: "the CMS structure is not EnvelopedData")
        }
        guard let output = BIO_new(BIO_s_mem()) else { throw Failure(description: "out of memory") }
        defer { BIO_free(output) }
        // CMS_BINARY: the content is bytes, not text whose line ends are to be translated.
        guard CMS_decrypt(content, key, certificate, nil, output, UInt32(CMS_BINARY)) == 1 else {
            throw Failure(description: "it cannot be opened with this study's key (\(lastError()))")
        }
        var start: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(output, BIO_CTRL_INFO, 0, &start)
        guard length >= 0, let start else { return [] }
        return start.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// libcrypto's reason for the last failure, for the message (never key material).
    private static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no reason given" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
