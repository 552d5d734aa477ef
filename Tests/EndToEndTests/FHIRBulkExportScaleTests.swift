import AsyncHTTPClient
import Foundation
import JSONText
import NIOCore
import Testing
import TestSupport

/// A Bulk Data export of a study of 100,000 responses, as a warehouse runs it: the files read
/// back line by line as they stream, their count reconciled with the study's table at the
/// export's transactionTime, a sample checked by fhir.resources, and the response service's
/// memory bounded while it writes them (it never holds the study, or a file, whole).
@Suite(.needsCluster, .serialized) struct FHIRBulkExportScaleTests {
    static let responses = 100_000

    /// One response through the app, processed, and `responses - 1` more written straight into
    /// the table, as a study's months of check-ins would be: each its own run of the same
    /// activity version, received over the past days.
    static func seed(_ platform: Platform, responses: Int) async throws {
        let app = platform.app(.ios)
        let enrolled = try await app.response(
            "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
        let appToken = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
        #expect(try await app.processResponse(JourneyResponses.dailyResponse(participant: appToken, name: "daily", version: "1.0")).status == 200)
        _ = try await eventually("the app's response processed", within: .seconds(60)) {
            let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
            return list.json?["responses"]?.array?.first { $0["status"]?.string == "processed" }
        }
        _ = try await platform.withResponseDatabase { postgres, logger in
            try await postgres.query(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                                       fingerprint, status, received_at, processed_at)
                SELECT r.participant_id, r.study_key, r.activity_id, r.activity_version, 'scale-' || g, r.metadata,
                       jsonb_build_object('startTime', r.data -> 'startTime', 'endTime', r.data -> 'endTime',
                                          'results', jsonb_path_query_array(r.data, '$.results[1 to 12]')),
                       'scale-' || g, 'processed', r.received_at - make_interval(secs => g), r.processed_at
                FROM responses r CROSS JOIN generate_series(1, \(responses - 1)) g
                WHERE r.study_key = 'DEMOSTUDY'
                """, logger: logger)
        }
    }

    /// The export's worker killed (SIGKILL) half way through writing: once its lease has ended
    /// (moved to now here rather than waited for), the restarted service's worker writes it again
    /// from nothing, and the files hold every response once.
    @Test func anExportWhoseWorkerIsKilledIsWrittenAgainWhole() async throws {
        try await Platform.run { platform in
            let fhir = platform.response.baseURL + "/fhir/r4"
            let responses = 20_000
            try await Self.seed(platform, responses: responses)
            let warehouse = try await FHIRBulkExportTests.client(platform, name: "Warehouse")
            let kickOff = try await Wire.send(
                .GET, fhir + "/Group/DEMOSTUDY/$export?_type=QuestionnaireResponse",
                headers: [("Authorization", "Bearer \(warehouse.token)"), ("Accept", "application/fhir+json"), ("Prefer", "respond-async")])
            #expect(kickOff.status == 202, "\(kickOff.text)")
            let statusURL = try #require(kickOff.header("Content-Location"))
            func written() async throws -> (chunks: Int, status: String, attempts: Int) {
                try await platform.withResponseDatabase { postgres, logger in
                    var found = (0, "", 0)
                    for try await row in try await postgres.query(
                        """
                        SELECT (SELECT count(*)::int FROM fhir_export_chunks), status, attempts FROM fhir_exports
                        """, logger: logger
                    ).decode((Int, String, Int).self) { found = row }
                    return found
                }
            }
            let partway = try await eventually("the export's first chunks written", within: .seconds(120), poll: .milliseconds(20)) {
                try await written()
            } until: { $0.chunks >= 2 }
            #expect(partway.status == "running")
            // Kept until the end: a process whose handle goes is killed.
            let restarted = try await platform.restartResponse(killing: true)
            defer { _ = restarted.stop() }
            let left = try await written()
            #expect(left.status == "running" && left.chunks >= 2, "the dead worker's chunks are still there: \(left)")
            // Its lease ends now rather than in two minutes.
            _ = try await platform.withResponseDatabase { postgres, logger in
                try await postgres.query("UPDATE fhir_exports SET next_attempt_at = now()", logger: logger)
            }
            let manifest = try await FHIRBulkExportTests.manifest(statusURL, token: warehouse.token, within: .seconds(300))
            #expect(try await written().attempts == 2)
            let output = manifest["output"]?.array ?? []
            #expect(output.compactMap { $0["count"]?.integer }.reduce(0, +) == responses, "\(output)")
            var ids = Set<String>()
            var lines = 0
            for file in output {
                let read = try await Wire.send(
                    .GET, try #require(file["url"]?.string), headers: [("Authorization", "Bearer \(warehouse.token)")],
                    timeout: .seconds(300), limit: 256 << 20)
                #expect(read.status == 200)
                for line in read.body.split(separator: UInt8(ascii: "\n")) {
                    lines += 1
                    if let id = (try? JSONValue.parse(Array(line), budget: .studyDocument))?["id"]?.string { ids.insert(id) }
                }
            }
            #expect(lines == responses)
            #expect(ids.count == responses, "every response once, none twice")
        }
    }

    /// `count` more responses in the study, each a copy of one of `seed`'s under its own run.
    static func add(_ platform: Platform, responses count: Int) async throws {
        _ = try await platform.withResponseDatabase { postgres, logger in
            try await postgres.query(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                                       fingerprint, status, received_at, processed_at)
                SELECT r.participant_id, r.study_key, r.activity_id, r.activity_version, 'more-' || g, r.metadata, r.data,
                       'more-' || g, 'processed', r.received_at - make_interval(secs => g), r.processed_at
                FROM (SELECT * FROM responses WHERE study_key = 'DEMOSTUDY' AND activity_run_id LIKE 'scale-%' LIMIT 1) r
                CROSS JOIN generate_series(1, \(count)) g
                """, logger: logger)
        }
    }

    /// What one export of the study's responses came to, read back as a warehouse reads it.
    struct Export {
        var lines = 0
        var bytes = 0
        var written: Duration = .zero
        /// Every hundredth line, at most 200, for the validator.
        var sample: [Data] = []
    }

    /// Kicks off an export of the study's responses, waits for its manifest, reconciles its
    /// counts with the study's table at its transactionTime, and reads every file as it streams,
    /// a line at a time: the lines counted, each a QuestionnaireResponse, every hundredth parsed.
    static func exportAndRead(_ platform: Platform, token: String, expecting responses: Int) async throws -> Export {
        let fhir = platform.response.baseURL + "/fhir/r4"
        var export = Export()
        let started = ContinuousClock.now
        let kickOff = try await Wire.send(
            .GET, fhir + "/Group/DEMOSTUDY/$export?_type=QuestionnaireResponse",
            headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/fhir+json"), ("Prefer", "respond-async")])
        #expect(kickOff.status == 202, "\(kickOff.text)")
        let manifest = try await FHIRBulkExportTests.manifest(
            try #require(kickOff.header("Content-Location")), token: token, within: .seconds(900))
        export.written = started.duration(to: .now)
        let output = manifest["output"]?.array ?? []
        #expect(!output.isEmpty)
        let transactionTime = try #require(manifest["transactionTime"]?.string)
        let stored = try await platform.withResponseDatabase { postgres, logger in
            var count = 0
            for try await n in try await postgres.query(
                "SELECT count(*)::int FROM responses WHERE study_key = 'DEMOSTUDY' AND received_at <= \(transactionTime)::timestamptz",
                logger: logger
            ).decode(Int.self) { count = n }
            return count
        }
        #expect(stored == responses)
        #expect(output.compactMap { $0["count"]?.integer }.reduce(0, +) == stored, "\(output)")
        for file in output {
            var request = HTTPClientRequest(url: try #require(file["url"]?.string))
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
            #expect(response.status == .ok)
            var pending: [UInt8] = []
            var inFile = 0
            func line(_ text: ArraySlice<UInt8>) {
                export.lines += 1
                inFile += 1
                let looksRight = text.first == UInt8(ascii: "{") && text.last == UInt8(ascii: "}")
                if !looksRight { Issue.record("line \(export.lines) is not one JSON object") }
                if export.lines % 100 == 1 {
                    let resource = try? JSONValue.parse(text, budget: .studyDocument)
                    #expect(resource?["resourceType"]?.string == "QuestionnaireResponse", "line \(export.lines)")
                    if export.sample.count < 200 { export.sample.append(Data(text)) }
                }
            }
            for try await chunk in response.body {
                export.bytes += chunk.readableBytes
                pending += chunk.readableBytesView
                var start = pending.startIndex
                while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    line(pending[start..<end])
                    start = end + 1
                }
                pending.removeSubrange(..<start)
            }
            #expect(pending.isEmpty, "every line ends with a newline")
            #expect(inFile == file["count"]?.integer, "\(file)")
        }
        #expect(export.lines == stored)
        return export
    }

    /// The export's memory is bounded by what it writes at once, not by the study: the service's
    /// highest memory is taken after a first export of a fifth of the responses (which also pays
    /// what any first export costs: code paged in, caches, the allocator's pools) and again after
    /// an export of them all, and grows between the two by much less than the second export's
    /// extra bytes. Had it held the study, or a file, whole, it would grow by at least those.
    @Test func aStudyOf100000ResponsesExportsLineByLineInBoundedMemory() async throws {
        try await Platform.run { platform in
            let warehouse = try await FHIRBulkExportTests.client(platform, name: "Warehouse")
            let few = Self.responses / 5
            try await Self.seed(platform, responses: few)
            let first = try await Self.exportAndRead(platform, token: warehouse.token, expecting: few)
            let afterFirst = try platform.response.residentMemory()

            try await Self.add(platform, responses: Self.responses - few)
            let all = try await Self.exportAndRead(platform, token: warehouse.token, expecting: Self.responses)
            let checked = try await SMARTBackendServicesTests.validated(all.sample)
            #expect(all.sample.count == 200)
            #expect(checked.contains("checked \(all.sample.count) resources"), "\(checked)")
            #expect(checked.contains(", 0 failures"), "\(checked)")

            let after = try platform.response.residentMemory()
            let growth = max(0, after.peak - afterFirst.peak)
            print("FHIR export of \(first.lines) then \(all.lines) responses: \(first.bytes) then \(all.bytes) bytes,"
                + " kick-off to manifest \(first.written) then \(all.written) (a debug build);"
                + " the response service's peak memory \(afterFirst.peak) after the first, \(after.peak) bytes after the second")
            let bound = 64 << 20
            #expect(all.bytes - first.bytes > 2 * bound, "the second export's extra bytes are twice the bound below, at least")
            #expect(growth < bound, "peak memory grew by \(growth) bytes for \(all.bytes - first.bytes) bytes more exported")
        }
    }
}
