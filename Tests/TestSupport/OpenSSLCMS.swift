import Foundation

/// Sealing with the `openssl` command (Debian's openssl package), as Sage's clients seal a result
/// archive: CMS EnvelopedData for the study's certificate.
public enum OpenSSLCMS {
    /// `bytes` sealed for `certificatePEM` by `openssl cms -encrypt` (AES-256-CBC, DER unless `pem`).
    /// `stream` writes it as a streaming encoder does, BER with indefinite lengths and the
    /// ciphertext in chunks, as both of Sage's clients write theirs (`SageClientRun.seal`).
    public static func encrypt(
        _ bytes: [UInt8], certificatePEM: String, pem: Bool = false, cipher: String = "-aes-256-cbc", stream: Bool = false
    ) throws -> [UInt8] {
        try withFiles(bytes, certificatePEM) { input, certificate, output in
            try ExternalTool.run(
                "openssl",
                ["cms", "-encrypt", "-binary", cipher] + (stream ? ["-stream"] : [])
                    + ["-in", input, "-out", output, "-outform", pem ? "PEM" : "DER", certificate])
        }
    }

    /// `bytes` signed (not sealed) with a fresh key: a CMS structure of another type.
    public static func signedData(_ bytes: [UInt8]) throws -> [UInt8] {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        try ExternalTool.run(
            "openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=other"])
        return try withFiles(bytes, try String(contentsOfFile: certificate, encoding: .utf8)) { input, _, output in
            try ExternalTool.run(
                "openssl", ["cms", "-sign", "-binary", "-nodetach", "-in", input, "-signer", certificate, "-inkey", key, "-out", output, "-outform", "DER"])
        }
    }

    /// A certificate of a key the platform never made, as PEM.
    public static func strangerCertificate() throws -> String {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        try ExternalTool.run(
            "openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory.appendingPathComponent("key.pem").path,
                        "-out", certificate, "-days", "1", "-subj", "/CN=stranger"])
        return try String(contentsOfFile: certificate, encoding: .utf8)
    }

    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-cms-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static func withFiles(
        _ bytes: [UInt8], _ certificatePEM: String, _ body: (String, String, String) throws -> Void
    ) throws -> [UInt8] {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.bin")
        let certificate = directory.appendingPathComponent("cert.pem")
        let output = directory.appendingPathComponent("out.cms")
        try Data(bytes).write(to: input)
        try Data(certificatePEM.utf8).write(to: certificate)
        try body(input.path, certificate.path, output.path)
        return Array(try Data(contentsOf: output))
    }
}
