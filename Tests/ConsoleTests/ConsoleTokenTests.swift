import Foundation
import HTTPTypes
import Testing
import TestSupport

/// The enrollment tokens page, over the response service's admin API: batches with their counts,
/// a new batch, and each batch's CSV and QR sheet passed on from the response service.
@Suite(.needsCluster) struct ConsoleTokenTests {
    @Test func anEditorMakesABatchAndDownloadsItsCSVAndQRSheet() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let empty = try await f.browser.get("/studies/CONSOLE1/tokens")
            #expect(empty.status == .ok)
            #expect(empty.html.contains("No tokens yet."))
            #expect(empty.html.contains(#"aria-current="page">Enrollment tokens"#))
            let csrf = try #require(empty.input("csrf"))

            for bad in ["", "0", "many", "100001"] {
                let refused = try await f.browser.post("/studies/CONSOLE1/tokens", [("csrf", csrf), ("count", bad)])
                #expect(refused.status == .unprocessableContent, "\(bad)")
                #expect(refused.html.contains("Enter how many tokens to make: 1 to 100,000.") || refused.html.contains("1 to 100000"))
            }
            let made = try await f.browser.post("/studies/CONSOLE1/tokens", [("csrf", csrf), ("count", "25")])
            #expect(made.status == .seeOther)
            let location = try #require(made.location)
            #expect(location.hasPrefix("/studies/CONSOLE1/tokens?created="))
            let listed = try await f.browser.get(location)
            #expect(listed.html.contains(#"<span class="badge">new</span>"#))
            #expect(listed.html.contains(#"<td class="number">25</td><td class="number">0</td><td class="number">25</td>"#))
            let batchId = String(location.dropFirst("/studies/CONSOLE1/tokens?created=".count))

            let csv = try await f.browser.get("/studies/CONSOLE1/tokens/\(batchId)/tokens.csv")
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(csv.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
            let tokens = csv.html.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[0]) }
            try #require(tokens.count == 25)

            let sheet = try await f.browser.get("/studies/CONSOLE1/tokens/\(batchId)/qr.pdf")
            #expect(sheet.status == .ok)
            #expect(sheet.headers[.contentType] == "application/pdf")
            #expect(sheet.headers[.contentSecurityPolicy] != nil, "the console's headers on a download too")
            #expect(try ExternalTool.qrCodes(inPDF: sheet.data).sorted() == tokens.sorted())
        }
    }

    @Test func aViewerSeesTheBatchesButCanNeitherMakeNorDownloadThem() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let csrf = try #require(try await f.browser.get("/studies/CONSOLE1/tokens").input("csrf"))
            let location = try #require(try await f.browser.post("/studies/CONSOLE1/tokens", [("csrf", csrf), ("count", "3")]).location)
            let batchId = String(location.dropFirst("/studies/CONSOLE1/tokens?created=".count))

            let password = try await f.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: f.browser.client)
            try await viewer.signIn("viewer@console.test", password)
            let page = try await viewer.get("/studies/CONSOLE1/tokens")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"<td class="number">3</td>"#))
            #expect(!page.html.contains("Make the batch"))
            #expect(!page.html.contains("tokens.csv"))
            let refusedCSV = try await viewer.get("/studies/CONSOLE1/tokens/\(batchId)/tokens.csv")
            #expect(refusedCSV.status == .forbidden)
            #expect(!refusedCSV.html.contains("token,used"))
            #expect(refusedCSV.headers[.contentType]?.hasPrefix("text/html") == true)
            let viewerCSRF = try #require(page.input("csrf"))
            #expect(try await viewer.post("/studies/CONSOLE1/tokens", [("csrf", viewerCSRF), ("count", "5")]).status == .forbidden)
        }
    }
}
