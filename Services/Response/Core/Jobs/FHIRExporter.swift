import FHIR
import Foundation
import JSONText
import Logging
import NIOCore
import ServiceKit

/// Works the FHIR API's Bulk Data exports (docs/fhir.md, Bulk Data): one export a claim, written
/// type by type as NDJSON, a page of rows at a time, into chunks of at most `chunkBytes`, so that
/// neither the study nor a file is ever held whole. Any replica may run it; the lease is renewed
/// with every chunk, and an export whose worker died starts again from nothing once its lease
/// ends. A cancelled export (its row deleted) is noticed between pages and left.
package final class FHIRExporter: WorkQueue {
    package static let policy = DrainPolicy(batchSize: 1, lease: .seconds(120), retry: RetryPolicy(maxAttempts: 3))
    package var policy: DrainPolicy { Self.policy }
    package let queueName = "fhir-exports"
    /// Rows read per page (responses pages also end at `FHIRStore.maxPageBytes`).
    package static let pageSize = 1_000
    package static let chunkBytes = 4 << 20

    package let exports: FHIRExportStore
    package let catalog: StudyCatalog
    package let resources: FHIRResources
    /// For the exports of clients registered to receive participants' data de-identified.
    package let deidentification: FHIRDeidentification
    package let audit: AuditLog
    package let metrics: ServiceMetrics
    package let logger: Logger

    package init(
        exports: FHIRExportStore, catalog: StudyCatalog, resources: FHIRResources, deidentification: FHIRDeidentification,
        audit: AuditLog, metrics: ServiceMetrics, logger: Logger
    ) {
        self.exports = exports
        self.catalog = catalog
        self.resources = resources
        self.deidentification = deidentification
        self.audit = audit
        self.metrics = metrics
        self.logger = logger
    }

    package func round() async throws -> Int {
        let expired = try await exports.deleteExpired()
        if expired > 0 { logger.info("expired FHIR exports deleted", metadata: ["exports": "\(expired)"]) }
        return try await drain(queueName, policy: policy, metrics: metrics, logger: logger)
    }

    package func claim(limit: Int, lease: Duration) async throws -> [FHIRExportStore.Export] {
        try await exports.claim(limit: limit, lease: lease)
    }

    package func attempts(of item: FHIRExportStore.Export) -> Int { item.attempts }

    package enum Completion: Sendable {
        case written([String: Int])
        case cancelled
    }

    package func outcome(of completion: Completion) -> String {
        if case .cancelled = completion { return "cancelled" }
        return "done"
    }

    /// Thrown between pages when the export was cancelled.
    private struct Cancelled: Error {}

    package func perform(_ item: FHIRExportStore.Export) async -> WorkResult<Completion> {
        do {
            guard let study = try await catalog.study(item.studyKey) else { return .rejected("the study is no longer known here") }
            try await exports.clearFiles(of: item.id)
            var written: [String: Int] = [:]
            for (index, type) in item.types.enumerated() {
                var file = FileWriter(exports: exports, export: item, number: index + 1, type: type, lease: policy.lease)
                file.progress = "\(index + 1) of \(item.types.count) types"
                try await exports.startFile(of: item.id, number: file.number, type: type)
                do {
                    try await write(type, of: study, for: item, into: &file)
                    try await file.finish()
                } catch {
                    // The chunk still being stored is waited for: nothing of an attempt that
                    // ended lands in the files of the next.
                    await file.abandon()
                    throw error
                }
                if file.resources == 0 { try await exports.dropEmptyFile(of: item.id, number: file.number) }
                written[type] = file.resources
                guard try await exports.exists(item.id) else { throw Cancelled() }
            }
            return .done(.written(written))
        } catch is Cancelled {
            return .done(.cancelled)
        } catch let refusal as FHIRRefusal {
            return .failed("\(refusal)")
        } catch {
            return .failed("\(error)")
        }
    }

    /// Writes every resource of `type` the export asked for.
    private func write(
        _ type: String, of study: StudyCatalog.Study, for item: FHIRExportStore.Export, into file: inout FileWriter
    ) async throws {
        switch type {
        case "ResearchStudy":
            let resource = try await resources.researchStudy(study)
            if Self.isAfterSince(resource, item.since) { try await file.add(resource) }
        case "Questionnaire":
            let listing = try await resources.questionnaires(of: study)
            for listed in listing.entries where item.since.map({ listed.publishedAt > $0 }) ?? true {
                try await file.add(try await resources.questionnaire(listed, of: study))
            }
        default:
            var search = FHIRSearch(type: type)
            search.count = Self.pageSize
            if let since = item.since { search.lastUpdated.append((.gt, since)) }
            // Responses stored after the kick-off are not the export's; an enrollment's later
            // withdrawal is told as it now is.
            if type == "QuestionnaireResponse" || type == "Observation" { search.lastUpdated.append((.le, item.transactionTime)) }
            let resources = self.resources
            let encoder = PageEncoder(
                resources: resources, deidentification: item.deidentified ? deidentification : nil, studyId: study.studyId, type: type)
            // Three stages at once: the next page is read from the database while this one is
            // turned into NDJSON lines (its answers parsed and written on every core) and the one
            // before is written out.
            var reading = Task { [search] in try await resources.rows(of: study, search, answersUnparsed: true) }
            var encoding: Task<[PageEncoder.Lines], Never>?
            defer {
                reading.cancel()
                encoding?.cancel()
            }
            while true {
                let rows = try await reading.value
                if let next = rows.nextAfter {
                    search.after = next
                    reading = Task { [search] in try await resources.rows(of: study, search, answersUnparsed: true) }
                }
                let encoded = Task { await encoder.lines(of: rows) }
                if let previous = encoding {
                    for lines in await previous.value { try await file.add(lines) }
                }
                encoding = encoded
                guard rows.nextAfter != nil else { break }
                guard try await exports.exists(item.id) else { throw Cancelled() }
            }
            if let last = encoding {
                for lines in await last.value { try await file.add(lines) }
            }
        }
    }

    static func isAfterSince(_ resource: JSONValue, _ since: Date?) -> Bool {
        guard let since else { return true }
        guard let text = resource["meta"]?["lastUpdated"]?.string,
            let updated = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains(".")))
        else { return true }
        return updated > since
    }

    package func complete(_ item: FHIRExportStore.Export, with completion: Completion) async throws {
        guard case .written(let written) = completion else { return }
        try await exports.complete(item.id)
        var details = written.mapValues(String.init)
        details["export"] = item.id.uuidString.lowercased()
        try await audit.record(actor: "fhir-client:\(item.clientId)", action: "fhir.export_completed", studyId: item.studyKey, details: details)
    }

    package func fail(_ item: FHIRExportStore.Export, reason: String, retryAfter: Duration?) async throws {
        try await exports.fail(item.id, reason: reason, retryAfter: retryAfter)
    }
}

/// One NDJSON file being written: resources a line each, sent to the store a chunk at a time.
private struct FileWriter {
    let exports: FHIRExportStore
    let export: FHIRExportStore.Export
    let number: Int
    let type: String
    let lease: Duration
    var progress = ""
    private(set) var resources = 0
    private var inChunk = 0
    private var chunk = 0
    private var buffer = ByteBuffer()

    init(exports: FHIRExportStore, export: FHIRExportStore.Export, number: Int, type: String, lease: Duration) {
        self.exports = exports
        self.export = export
        self.number = number
        self.type = type
        self.lease = lease
    }

    mutating func add(_ resource: JSONValue) async throws {
        var text: [UInt8] = []
        PageEncoder.append(resource, to: &text)
        try await add(PageEncoder.Lines(text: text, resources: 1))
    }

    /// Whole lines, each ending in its newline. A chunk ends after the lines that take it past
    /// `chunkBytes` (a slice of a page at most), so no line is split between two.
    mutating func add(_ lines: PageEncoder.Lines) async throws {
        buffer.writeBytes(lines.text)
        resources += lines.resources
        inChunk += lines.resources
        if buffer.readableBytes >= FHIRExporter.chunkBytes { try await flush() }
    }

    mutating func finish() async throws {
        if buffer.readableBytes > 0 { try await flush() }
        try await storing?.value
        storing = nil
    }

    /// Waits for the chunk being stored, whatever becomes of it.
    mutating func abandon() async {
        _ = await storing?.result
        storing = nil
    }

    /// The chunk being stored: the next fills while it is, so a chunk's round trip to the
    /// database is not the export's to wait for. One at a time: each counts itself into its
    /// file's row, and two at once would only wait on each other's lock.
    private var storing: Task<Void, any Error>?

    private mutating func flush() async throws {
        try await storing?.value
        chunk += 1
        let (exports, id, file, chunk, resources) = (self.exports, export.id, number, self.chunk, inChunk)
        let (data, progress, lease) = (buffer, "\(progress); \(type): \(self.resources) written", lease)
        storing = Task { try await exports.append(data, to: id, file: file, chunk: chunk, resources: resources, progress: progress, lease: lease) }
        buffer = ByteBuffer()
        buffer.reserveCapacity(FHIRExporter.chunkBytes + FHIRExporter.chunkBytes / 2)
        inChunk = 0
    }
}

/// Turns a page's rows into NDJSON lines: its resources mapped (each activity version's design
/// prepared once for the page), de-identified when the export is, and written as JSON.
private struct PageEncoder: Sendable {
    /// NDJSON lines written together, and how many resources they are.
    struct Lines: Sendable {
        var text: [UInt8]
        var resources: Int
    }

    let resources: FHIRResources
    let deidentification: FHIRDeidentification?
    let studyId: String
    let type: String

    /// How many slices of a page of responses are written at once.
    static let slices = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    func lines(of rows: FHIRResources.Rows) async -> [Lines] {
        if deidentification == nil, case .unparsedResponses(let page) = rows {
            // Responses, the bulk of an export, are written straight to text from the text
            // their answers were stored as, a slice of the page on each core.
            let responses = page.resources
            let size = (responses.count + Self.slices - 1) / max(1, Self.slices)
            guard size > 0 else { return [] }
            let naming = resources.naming
            return await withTaskGroup(of: (Int, Lines).self) { group in
                for start in stride(from: 0, to: responses.count, by: size) {
                    let slice = responses[start..<min(start + size, responses.count)]
                    group.addTask {
                        var mappers = QuestionnaireResponseMapping.Mappers(naming: naming)
                        var text = FHIRText()
                        for unparsed in slice {
                            mappers.write(unparsed.response, answers: unparsed.data.readableBytesView, to: &text)
                            text.endLine()
                        }
                        return (start, Lines(text: text.bytes, resources: slice.count))
                    }
                }
                var written: [(Int, Lines)] = []
                for await slice in group { written.append(slice) }
                return written.sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
        var mappers = QuestionnaireResponseMapping.Mappers(naming: resources.naming)
        let page = resources.page(rows, type: type, mappers: &mappers)
        var text: [UInt8] = []
        for (resource, participant) in zip(page.resources, page.participants) {
            Self.append(deidentification?.apply(resource, studyId: studyId, participantId: participant) ?? resource, to: &text)
        }
        return [Lines(text: text, resources: page.resources.count)]
    }

    /// `resource`'s line, newline included.
    static func append(_ resource: JSONValue, to text: inout [UInt8]) {
        resource.write(to: &text, sortedKeys: false)
        text.append(UInt8(ascii: "\n"))
    }
}
