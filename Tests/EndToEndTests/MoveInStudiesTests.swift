import AsyncHTTPClient
import Foundation
import JSONText
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Moving a study in from another deployment through the study-metadata API it serves its apps:
/// another StudyStack platform is the source (it serves the same API the MyStudies servers do),
/// `studystack-import` reads it, reports a dry run, imports, is killed half way and resumed, and
/// a second run changes nothing. The oracle is the source: every reply the apps read of the study
/// there, the destination serves the same.
@Suite(.needsCluster) struct MoveInStudiesTests {
    static let studyId = "MOVEDSTUDY"
    static let zone = "America/New_York"
    /// The source's versions of `daily` (each publish changes its first question).
    static let dailyVersions = ["1.0", "1.1", "1.2", "1.3", "1.4"]

    @Test func aStudyMovesInKeepingWhatItsAppsSeeAndAKilledImportResumes() async throws {
        try await Platform.run { source in
            try await Self.publishSource(on: source)
            try await Platform.run { destination in
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("move-in-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                let export = folder.appendingPathComponent("studies.json")

                // Read: GETs only, as the iOS app reads the source.
                let read = try await Self.command(
                    ["studies", "read", "--from", source.metadata.baseURL + "/StudyMetaData", "--app-id", "DEMOAPP",
                     "--org-id", "DEMOORG", "--study", Self.studyId, "--out", export.path],
                    environment: ["MYSTUDIES_APP_CREDENTIAL": source.iosCredential])
                #expect(String(decoding: read, as: UTF8.self).contains("read 1 studies"))
                let exported = try JSONDecoder().decode(MyStudiesStudyExport.self, from: Data(contentsOf: export))
                #expect(exported.studies.count == 1)
                let dailyRead = exported.studies[0].activities.filter { $0.activityId == "daily" && $0.reply != nil }
                #expect(dailyRead.map(\.version) == Self.dailyVersions)

                let destinationArguments = [
                    export.path, "--to", destination.metadata.baseURL, "--app-id", "DEMOAPP", "--time-zone", Self.zone, "--json",
                ]
                let admin = ["STUDYSTACK_ADMIN_TOKEN": destination.adminToken]

                // The dry run: what will come over, and nothing written.
                let planned = try JSONDecoder().decode(
                    StudyMoveInReport.self,
                    from: try await Self.command(["studies", "plan"] + destinationArguments, environment: admin))
                #expect(planned.dryRun)
                let study = try #require(planned.studies.first)
                #expect(planned.studies.count == 1)
                #expect(study.state == .new && study.versionsHere == 0)
                #expect(study.versions == ["moved-1", "moved-2", "moved-3", "moved-4", "1.4"])
                #expect(study.activities.first { $0.activityId == "daily" }?.versions == Self.dailyVersions)
                #expect(study.counts.activities == 9)
                #expect(study.counts.activityVersions == 13)
                #expect(study.counts.resources == 2 && study.counts.participantProperties == 1)
                #expect(study.counts.consentSections == 5 && study.counts.eligibilityQuestions == 2)
                #expect(study.counts.notImported == 0)
                // What changes on the way is said: an ongoing activity opens at the launch here.
                #expect(study.findings.contains { $0.effect == .changed && $0.at.contains("activityList") && $0.message.contains("ongoing") })
                #expect(try await destination.admin.send(.GET, "/admin/v1/studies/\(Self.studyId)/draft").status == 404)

                // The import, killed once a version is in and before the last is.
                let started = try Self.spawn(["studies", "apply"] + destinationArguments, environment: admin)
                let frozenBeforeKill = try await destination.withMetadataDatabase { client, logger in
                    try await eventually("the import's first version frozen", within: .seconds(120)) {
                        try await Self.versionCount(client, logger)
                    } until: { $0 >= 1 }
                }
                await destination.metadata.kill()
                _ = await started.wait(within: .seconds(60))
                let frozenAtKill = try await destination.withMetadataDatabase { try await Self.versionCount($0, $1) }
                #expect(frozenBeforeKill >= 1)
                #expect(frozenAtKill < 5, "the import ended before it could be killed half way")
                let restarted = try await destination.restartMetadata()
                defer { _ = restarted.stop() }

                // Resumed: it goes on from the first missing version.
                let resumed = try JSONDecoder().decode(
                    StudyMoveInReport.self,
                    from: try await Self.command(["studies", "apply"] + destinationArguments, environment: admin))
                #expect(resumed.studies.first?.state == .partly)
                #expect(resumed.studies.first?.versionsHere == 5)
                let versions = try await destination.admin.send(.GET, "/admin/v1/studies/\(Self.studyId)/versions")
                let labels = versions.json?["versions"]?.array?.compactMap { $0["label"]?.string }
                #expect(labels == ["moved-1", "moved-2", "moved-3", "moved-4", "1.4"])
                #expect(try await destination.withMetadataDatabase { try await Self.versionCount($0, $1) } == 5)

                // A second run changes nothing: no version, no audit event.
                let auditBefore = try await Self.auditCount(destination)
                let again = try JSONDecoder().decode(
                    StudyMoveInReport.self,
                    from: try await Self.command(["studies", "apply"] + destinationArguments, environment: admin))
                #expect(again.studies.first?.state == .imported)
                #expect(try await destination.withMetadataDatabase { try await Self.versionCount($0, $1) } == 5)
                #expect(try await Self.auditCount(destination) == auditBefore)

                // The report as a team reads it.
                let text = String(
                    decoding: try await Self.command(["studies", "plan"] + destinationArguments.dropLast(), environment: admin),
                    as: UTF8.self)
                #expect(text.contains("\(Self.studyId) (Active at the source): already imported: nothing changes"))

                try await Self.expectSameReplies(source: source, destination: destination)
            }
        }
    }

    /// Every reply the iOS app reads of the study, from both platforms, equal but for what the
    /// report says changes: when each version was published, and the ongoing activity's start.
    static func expectSameReplies(source: Platform, destination: Platform) async throws {
        let query = "studyId=\(studyId)"
        var paths = [
            "studyInfo?\(query)", "eligibilityConsent?\(query)", "consentDocument?\(query)&consentVersion=",
            "resources?\(query)", "studyDashboard?\(query)", "participantProperties?\(query)", "activityList?\(query)",
        ]
        paths += dailyVersions.map { "activity?\(query)&activityId=daily&activityVersion=\($0)" }
        for activity in ["weekly", "baseline", "followUp", "monthlyCheck", "clinicVisits", "postSurgery", "anytimeLog", "kicks"] {
            paths.append("activity?\(query)&activityId=\(activity)&activityVersion=1.0")
        }
        #expect(paths.count == 20)
        for path in paths {
            let there = try await appGet(source, path)
            let here = try await appGet(destination, path)
            #expect(there.status == 200 && here.status == 200, "\(path): \(there.status) there, \(here.status) here")
            let differences = Self.differences(comparable(there.json), comparable(here.json))
            #expect(differences.isEmpty, "\(path) differs at \(differences)")
        }
        let list = { (platform: Platform) async throws -> JSONValue? in
            try await appGet(platform, "studyList").json?["studies"]?.array?.first { $0["studyId"]?.string == studyId }
        }
        let listed = try #require(try await list(destination))
        #expect(comparable(try await list(source)) == comparable(listed))
        #expect(listed["studyVersion"]?.string == "1.4")
    }

    /// A reply without what differs by design (docs/moving-in.md): publication times; the ongoing
    /// activity's start (the launch here); the one-time activity that opened at the source's launch
    /// opens at that moment here, to the second, given as its start date.
    static func comparable(_ value: JSONValue?) -> JSONValue? {
        guard var object = value?.object else { return value }
        object.removeValue(forKey: "lastModified")
        if object["activityId"]?.string == "anytimeLog" {
            object.removeValue(forKey: "startTime")
            object.removeValue(forKey: "startDate")
        }
        if object["activityId"]?.string == "baseline" {
            object.removeValue(forKey: "startDate")
            if let start = object["startTime"]?.string, start.count == 28 {
                object["startTime"] = .string(String(start.prefix(19)) + ".000" + String(start.suffix(5)))
            }
        }
        return .object(object.mapValues { member in
            if case .array(let items) = member { return .array(items.map { comparable($0) ?? .null }) }
            return comparable(member) ?? .null
        })
    }

    /// Where two replies differ, as JSON Pointers with both values.
    static func differences(_ there: JSONValue?, _ here: JSONValue?, at pointer: String = "") -> [String] {
        switch (there, here) {
        case (.object(let a)?, .object(let b)?):
            let names = a.keys + b.keys.filter { !a.keys.contains($0) }
            return names.flatMap { differences(a[$0], b[$0], at: pointer + "/" + $0) }
        case (.array(let a)?, .array(let b)?) where a.count == b.count:
            return zip(a, b).enumerated().flatMap { differences($1.0, $1.1, at: pointer + "/\($0)") }
        default:
            return there == here ? [] : ["\(pointer): \(there.map { "\($0)" } ?? "absent") there, \(here.map { "\($0)" } ?? "absent") here"]
        }
    }

    static func appGet(_ platform: Platform, _ path: String) async throws -> Wire.Reply {
        let credential = Data(platform.iosCredential.utf8).base64EncodedString()
        return try await Wire.send(
            .GET, platform.metadata.baseURL + "/StudyMetaData/" + path,
            headers: [("Authorization", "Basic \(credential)"), ("applicationId", "DEMOAPP"), ("orgId", "DEMOORG")])
    }

    /// The example study as MOVEDSTUDY in DEMOAPP, launched, then `daily` changed four times.
    static func publishSource(on source: Platform) async throws {
        let example = try String(
            contentsOf: ServiceProcess.packageRoot.appendingPathComponent("docs/examples/complete-study.json"), encoding: .utf8)
            .replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "\#(studyId)""#)
        let saved = try await source.admin.send(.PUT, "/admin/v1/studies/\(studyId)/draft", raw: Data(example.utf8))
        #expect(saved.status == 201, "\(saved.text)")
        #expect(try await source.admin.send(.POST, "/admin/v1/studies/\(studyId)/launch").status == 200)
        let question = #""title": {"en": "How well did you sleep?""#
        #expect(example.contains(question))
        for update in 1...4 {
            let changed = example.replacingOccurrences(
                of: question, with: #""title": {"en": "How well did you sleep? (\#(update))""#)
            #expect(try await source.admin.send(.PUT, "/admin/v1/studies/\(studyId)/draft", raw: Data(changed.utf8)).status == 200)
            let published = try await source.admin.send(.POST, "/admin/v1/studies/\(studyId)/publish-updates")
            #expect(published.status == 200, "\(published.text)")
        }
    }

    static func versionCount(_ client: PostgresClient, _ logger: Logger) async throws -> Int {
        let rows = try await client.query("SELECT count(*)::int FROM study_versions WHERE study_id = \(studyId)", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    static func auditCount(_ platform: Platform) async throws -> Int {
        try await platform.withMetadataDatabase { client, logger in
            let rows = try await client.query(
                "SELECT count(*)::int FROM audit_events WHERE study_id = \(studyId)", logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    static var executable: String { ServiceProcess.packageRoot.appendingPathComponent(".build/debug/studystack-import").path }

    static func command(_ arguments: [String], environment: [String: String]) async throws -> Data {
        try await ChildProcess.runInTask(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            timeout: .seconds(600))
    }

    static func spawn(_ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        try ChildProcess.spawn(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            output: .null, error: .null)
    }
}
