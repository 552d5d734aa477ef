import Foundation
import ServiceKit

/// Programs from Debian's packages that tests check the services' output with.
public enum ExternalTool {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `tool` (looked up on PATH) with `arguments`, `input` on its standard input; returns
    /// what it printed. Throws when it cannot start or exits with a failure.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], input: Data? = nil) throws -> String {
        do {
            return String(decoding: try ChildProcess.run(tool, arguments, input: input), as: UTF8.self)
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// `run` on a thread of its own, for a tool that calls a server of this test process (a
    /// researcher's LabKey script): waiting for it on a thread of Swift's cooperative pool leaves
    /// one thread fewer to serve it, and two such waits on a two-core machine leave none.
    public static func runOffPool(_ tool: String, _ arguments: [String], input: Data? = nil) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try run(tool, arguments, input: input) }) }.start()
        }
    }

    /// The text of every QR code on the document's pages, as a phone would read them: each page
    /// rendered at 100 dpi by pdftoppm (poppler-utils), then decoded by zbarimg (zbar-tools).
    /// One line per code found, in page order.
    public static func qrCodes(inPDF pdf: Data) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("document.pdf")
        try pdf.write(to: file)
        try run("pdftoppm", ["-r", "100", "-gray", "-png", file.path, directory.appendingPathComponent("page").path])
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".png") }.sorted()
        guard !pages.isEmpty else { throw Failure(description: "pdftoppm rendered no page") }
        let decoded = try run(
            "zbarimg", ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable"] + pages.map { directory.appendingPathComponent($0).path })
        return decoded.split(separator: "\n").map(String.init)
    }

    /// The text of every QR code in an image file's bytes (PNG), decoded by zbarimg.
    public static func qrCodes(inImage image: Data) throws -> [String] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-qr-\(UUID().uuidString).png")
        try image.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try run("zbarimg", ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", file.path])
            .split(separator: "\n").map(String.init)
    }
}
