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
        try await platform.withResponseDatabase { postgres, logger in
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
            try await platform.withResponseDatabase { postgres, logger in
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

    @Test func aStudyOf100000ResponsesExportsLineByLineInBoundedMemory() async throws {
        try await Platform.run { platform in
            let fhir = platform.response.baseURL + "/fhir/r4"
            let warehouse = try await FHIRBulkExportTests.client(platform, name: "Warehouse")
            try await Self.seed(platform, responses: Self.responses)
            let before = try platform.response.residentMemory()

            let started = ContinuousClock.now
            let kickOff = try await Wire.send(
                .GET, fhir + "/Group/DEMOSTUDY/$export?_type=QuestionnaireResponse",
                headers: [("Authorization", "Bearer \(warehouse.token)"), ("Accept", "application/fhir+json"), ("Prefer", "respond-async")])
            #expect(kickOff.status == 202, "\(kickOff.text)")
            let manifest = try await FHIRBulkExportTests.manifest(
                try #require(kickOff.header("Content-Location")), token: warehouse.token, within: .seconds(900))
            let written = started.duration(to: .now)
            let afterWriting = try platform.response.residentMemory()
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
            #expect(stored == Self.responses)
            #expect(output.compactMap { $0["count"]?.integer }.reduce(0, +) == stored, "\(output)")

            // Every file read as it streams, a line at a time: the lines counted, each a
            // QuestionnaireResponse; every hundredth parsed whole and kept for the validator.
            var lines = 0
            var bytes = 0
            var sample: [Data] = []
            for file in output {
                var request = HTTPClientRequest(url: try #require(file["url"]?.string))
                request.headers.add(name: "Authorization", value: "Bearer \(warehouse.token)")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
                #expect(response.status == .ok)
                var pending: [UInt8] = []
                var inFile = 0
                func line(_ text: ArraySlice<UInt8>) {
                    lines += 1
                    inFile += 1
                    let looksRight = text.first == UInt8(ascii: "{") && text.last == UInt8(ascii: "}")
                    if !looksRight { Issue.record("line \(lines) is not one JSON object") }
                    if lines % 100 == 1 {
                        let resource = try? JSONValue.parse(text, budget: .studyDocument)
                        #expect(resource?["resourceType"]?.string == "QuestionnaireResponse", "line \(lines)")
                        if sample.count < 200 { sample.append(Data(text)) }
                    }
                }
                for try await chunk in response.body {
                    bytes += chunk.readableBytes
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
            #expect(lines == stored)
            let checked = try await SMARTBackendServicesTests.validated(sample)
            #expect(checked.contains("checked \(sample.count) resources"), "\(checked)")
            #expect(checked.contains(", 0 failures"), "\(checked)")

            // The service wrote the files a page and a chunk at a time: its highest memory grew by
            // what a few pages take, a small part of the files it wrote.
            let after = try platform.response.residentMemory()
            let growth = max(0, after.peak - before.peak)
            print("FHIR export of \(lines) responses: \(bytes) bytes, kick-off to manifest \(written) (a debug build);"
                + " the response service's peak memory \(before.peak) -> \(afterWriting.peak) once written -> \(after.peak) bytes once read")
            let bound = 96 << 20
            #expect(bytes > 2 * bound, "the files are twice the memory bound below, at least")
            #expect(growth < bound, "peak memory grew by \(growth) bytes for \(bytes) bytes exported")
        }
    }
}
