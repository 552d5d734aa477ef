import Foundation
import ServiceKit

/// A PDF's text read by poppler's `pdftotext` (Debian's poppler-utils), run as a child process
/// inside limits no PDF can get past: memory, CPU time, the size of what it writes, open files,
/// and a deadline after which it is killed. A PDF is a program of sorts (compressed streams that
/// may inflate a thousandfold, fonts, cross-references a crafted file can loop); read in a
/// process of its own, the worst it can do is end that process.
package struct PopplerPDFText: PDFTextReading {
    /// The most memory the reader may map.
    package static let maxMemoryBytes = 512 << 20
    package static let maxCPUSeconds = 20
    /// The most text it may write: far more than any consent document.
    package static let maxTextBytes = 4 << 20
    package static let deadline = Duration.seconds(30)

    package init() {}

    package func text(ofPDF bytes: [UInt8]) async throws(PDFTextFailure) -> String {
        guard Self.installed("pdftotext"), Self.installed("prlimit") else {
            throw PDFTextFailure("the console's host cannot read PDFs: install Debian's poppler-utils (pdftotext) and util-linux (prlimit)")
        }
        let output: Data
        do {
            output = try await ChildProcess.runInTask(
                "prlimit",
                [
                    "--as=\(Self.maxMemoryBytes)", "--cpu=\(Self.maxCPUSeconds)", "--fsize=\(Self.maxTextBytes)", "--nofile=32", "--",
                    "pdftotext", "-q", "-enc", "UTF-8", "-eol", "unix", "-", "-",
                ],
                input: Data(bytes), timeout: Self.deadline)
        } catch {
            throw PDFTextFailure("it is not a PDF the reader can open, or it took more than the reader may use")
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw PDFTextFailure("its text is not in an encoding the reader could write")
        }
        return text
    }

    /// Whether `program` is on PATH.
    static func installed(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
    }
}
