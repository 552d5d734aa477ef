import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The study's images and PDFs page: an upload stored by study-metadata (which checks it), shown
/// with the address the apps fetch it at, previewed through the console, and offered by the
/// image fields of the study's pages.
@Suite(.needsCluster) struct ConsoleFileTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 3, count: 30)

    @Test func anImageIsUploadedListedPreviewedAndOfferedWhereAnImageGoes() async throws {
        try await ConsoleFixture.run { fixture in
            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let empty = try await browser.get("/studies/CONSOLE1/files")
            #expect(empty.status == .ok)
            #expect(empty.html.contains("No file uploaded yet."))
            let csrf = try #require(empty.input("csrf"))

            // Refused and named: no file, a file that is not an image or a PDF.
            let none = try await browser.post("/studies/CONSOLE1/files", [("csrf", csrf)], files: [])
            #expect(none.status == .unprocessableContent)
            #expect(none.html.contains("Choose a file to upload."))
            let script = try await browser.post(
                "/studies/CONSOLE1/files", [("csrf", csrf)], files: [("upload", "logo.svg", Array("<svg onload=alert(1)>".utf8))])
            #expect(script.status == .unsupportedMediaType)
            #expect(script.html.contains("logo.svg was not stored: the file is not a PNG, JPEG or GIF image or a PDF"))
            // Without the form token nothing is stored.
            #expect(try await browser.post("/studies/CONSOLE1/files", [], files: [("upload", "a.png", Self.png)]).status == .forbidden)

            let stored = try await browser.post("/studies/CONSOLE1/files", [("csrf", csrf)], files: [("upload", "logo.png", Self.png)])
            #expect(stored.status == .seeOther)
            let page = try await browser.get(try #require(stored.location))
            #expect(page.html.contains("Stored: logo.png."))
            let rows = page.html.components(separatedBy: "<tr data-file=\"").dropFirst()
            try #require(rows.count == 1)
            let fileId = String(rows.first!.prefix { $0 != "\"" })
            #expect(page.html.contains("/StudyMetaData/files/\(fileId)"))
            let preview = try await browser.get("/studies/CONSOLE1/files/\(fileId)")
            #expect(preview.status == .ok)
            #expect(Array(preview.data) == Self.png)
            #expect(preview.headers[.contentType] == "image/png")

            // The thumbnail field offers it.
            let basics = try await browser.get("/studies/CONSOLE1/basics")
            #expect(basics.html.contains(#"list="study-images""#))
            #expect(basics.html.contains(#"<datalist id="study-images"><option value=""#))
            #expect(basics.html.contains("/StudyMetaData/files/\(fileId)\">logo.png</option>"))
            // A page with no field for an uploaded file reads none and lists none.
            #expect(!(try await browser.get("/studies/CONSOLE1/eligibility")).html.contains("<datalist"))

            // A resource of the PDF kind suggests the study's PDFs (and not its images); its
            // text kind is a text area, which suggests nothing.
            let pdf = try await browser.post(
                "/studies/CONSOLE1/files", [("csrf", csrf)], files: [("upload", "protocol.pdf", Array("%PDF-1.4\n%%EOF\n".utf8))])
            #expect(pdf.status == .seeOther)
            let resources = try await browser.get("/studies/CONSOLE1/resources")
            #expect(resources.status == .ok)
            let after = try #require(resources.html.components(separatedBy: #"<datalist id="study-pdfs">"#).dropFirst().first)
            let pdfList = try #require(after.components(separatedBy: "</datalist>").first)
            #expect(pdfList.contains(">protocol.pdf</option>"))
            #expect(!pdfList.contains("logo.png"))
            #expect(!resources.html.contains(#"<datalist id="study-images">"#))
        }
    }

    @Test func aViewerSeesTheFilesButUploadsNothing() async throws {
        try await ConsoleFixture.run { fixture in
            let password = try await fixture.makeAdmin("viewer@console.test", role: "viewer")
            let browser = fixture.browser
            try await browser.signIn("viewer@console.test", password)
            let page = try await browser.get("/studies/CONSOLE1/files")
            #expect(page.status == .ok)
            #expect(!page.html.contains("id=\"upload-form\""))
            let csrf = try #require(page.input("csrf"))
            let crafted = try await browser.post("/studies/CONSOLE1/files", [("csrf", csrf)], files: [("upload", "a.png", Self.png)])
            #expect(crafted.status == .forbidden)
        }
    }
}
