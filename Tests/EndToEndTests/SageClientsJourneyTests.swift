import Foundation
import StudyModels
import Testing
import TestSupport

/// Sage's clients as their code acts, against the real executables (docs/sage.md, What Sage's
/// clients do): a check-in with every kind of answer imported and published, runs archived and
/// sealed as the iOS and Android clients archive and seal them (the iOS one with a motion
/// recording that makes it 5 MB), uploaded through Bridge's handshake with the clients' own
/// request, header and order of calls, `complete` retried and the bytes put again, the same run
/// uploaded in a second session: each run stored once, every answer in the study's tables.
@Suite(.needsCluster) struct SageClientsJourneyTests {
    /// One upload as the clients make it: open a session with `Bridge-Session`, PUT with the
    /// file's headers, `complete` (retried: the client sends it until a call returns, and reads
    /// nothing of it), then the bytes put again as after a reply lost on the way.
    static func upload(_ platform: Platform, _ sealed: [UInt8], runId: String, session: String) async throws -> String {
        let bridge = [("Bridge-Session", session)]
        let opened = try await Wire.send(
            .POST, platform.response.baseURL + "/v3/uploads", headers: bridge, json: SageClientRun.uploadRequest(sealed, runId: runId))
        #expect(opened.status == 201, "\(opened.text)")
        let id = try #require(opened.json?["id"]?.string, "\(opened.text)")
        let url = try #require(opened.json?["url"]?.string)
        #expect(url.hasPrefix(platform.response.baseURL), "the session's URL is the service's own: \(url)")
        let put = try await Wire.send(.PUT, url, headers: SageClientRun.putHeaders(sealed), raw: Data(sealed))
        #expect(put.status == 200, "\(put.text)")
        let complete = platform.response.baseURL + "/v3/uploads/\(id)/complete"
        let first = try await Wire.send(.POST, complete, headers: bridge)
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json?["status"]?.string == "succeeded", "\(first.text)")
        let again = try await Wire.send(.POST, complete, headers: bridge)
        #expect(again.json?["archiveId"] == first.json?["archiveId"], "\(again.text)")
        #expect(try await Wire.send(.PUT, url, headers: SageClientRun.putHeaders(sealed), raw: Data(sealed)).status == 200)
        return try #require(first.json?["archiveId"]?.string)
    }

    /// The admin API's rows of `table`, each as its values by column name.
    static func rows(_ platform: Platform, _ table: String) async throws -> [[String: JSONValue]] {
        let reply = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/tables/\(table)/rows")
        #expect(reply.status == 200, "\(table): \(reply.text)")
        let columns = (reply.json?["columns"]?.array ?? []).map { $0["name"]?.string ?? "" }
        return (reply.json?["rows"]?.array ?? []).map { row in
            Dictionary(zip(columns, row.array ?? []), uniquingKeysWith: { first, _ in first })
        }
    }

    @Test func runsAsEachSageClientSendsThemAreStoredOnceWithEveryAnswerTyped() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            let imported = try await admin.send(
                .PUT, "/admin/v1/studies/DEMOSTUDY/draft/assessments/\(SageClientRun.assessmentIdentifier)",
                raw: Data(SageClientRun.assessment.utf8))
            #expect((200...201).contains(imported.status), "\(imported.text)")
            let published = try await admin.send(.POST, "/admin/v1/studies/DEMOSTUDY/publish-updates")
            #expect(published.status == 200, "\(published.text)")
            try await admin.waitForOutbox()
            let certificate = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/sage/certificate")
            #expect(certificate.status == 200, "\(certificate.text)")

            let platforms = SageClientRun.Platform.allCases
            try #require(platforms.count == 2)
            var archives: Set<String> = []
            for (index, kind) in platforms.enumerated() {
                let enrolled = try await Wire.send(
                    .POST, platform.response.baseURL + "/mobileappstudy-enroll.api?"
                        + Wire.query([("studyId", "DEMOSTUDY"), ("token", platform.tokens[index]), ("allowDataSharing", "true")]))
                let session = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
                let runId = UUID().uuidString
                // The iOS client stores its entries; 39,000 motion readings make its archive 5 MB.
                let archive = SageClientRun.archive(kind, runId: runId, motionSamples: kind == .ios ? 39_000 : 2_000)
                if kind == .ios { #expect(archive.count > 5_000_000, "\(archive.count) bytes") }
                let sealed = try SageClientRun.seal(archive, for: kind, certificatePEM: certificate.text)
                let archiveId = try await Self.upload(platform, sealed, runId: runId, session: session)
                // The same run in a new session (the client lost track of the first): the same archive.
                #expect(try await Self.upload(platform, sealed, runId: runId, session: session) == archiveId, "\(kind)")
                archives.insert(archiveId)
            }
            #expect(archives.count == 2)

            // Both processed, once each.
            let responses = try await eventually("both runs processed", within: .seconds(60)) {
                let list = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                return (list.json?["responses"]?.array ?? []).filter { $0["activityId"]?.string == SageClientRun.assessmentIdentifier }
            } until: { $0.count == 2 && $0.allSatisfy { $0["status"]?.string != "pending" } }
            try #require(responses.count == 2)
            #expect(responses.allSatisfy { $0["status"]?.string == "processed" }, "\(responses)")
            let listed = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/sage/archives")
            #expect(listed.json?["archives"]?.array?.count == 2, "\(listed.text)")
            #expect(listed.json?["archives"]?.array?.allSatisfy { $0["sealed"] == .bool(true) } == true)

            // Every answer in its column, with its type, for both participants.
            let top = try await Self.rows(platform, SageClientRun.assessmentIdentifier)
            try #require(top.count == 2)
            for row in top {
                #expect(SageClientRun.expectedRow.count == 7)
                for (column, expected) in SageClientRun.expectedRow {
                    switch expected {
                    case .number(let number): #expect(row[column] == .number(number), "\(column): \(row)")
                    case .text(let text): #expect(row[column] == .string(text), "\(column): \(row)")
                    }
                }
            }
            #expect(SageClientRun.expectedChoices.count == 4)
            for (key, expected) in SageClientRun.expectedChoices {
                let stored = try await Self.rows(platform, SageClientRun.assessmentIdentifier + key)
                #expect(stored.count == expected.count * 2, "\(key): \(stored)")
                let pairs = stored.map { ($0[key]?.string ?? "", $0["\(key)_Other_Text"]?.string) }
                for (choice, other) in expected {
                    #expect(pairs.filter { $0.0 == choice && $0.1 == other }.count == 2, "\(key) \(choice) \(other ?? "-"): \(pairs)")
                }
            }
        }
    }
}
