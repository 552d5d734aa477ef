import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Synchronization

/// Processes pending responses into the study's tables (docs/response-api.md, Processing into
/// tables), as a work queue, in batches. A batch of up to `policy.batchSize` due responses is
/// claimed with a lease (`ProcessingStore.claim`: `FOR UPDATE SKIP LOCKED`, studies taking turns,
/// their next attempt moved past the lease) and cut into slices of bounded size. A slice is
/// prepared outside any transaction (each activity version's design made ready once, which may
/// take a call to study-metadata; the answers read and planned) and then stored in one
/// transaction: locked again, every list's rows of every response in one statement each, every
/// status change in one more, one commit for the slice. While one slice is stored, the next is
/// prepared; a replica may run several such pipelines (`storesInFlight`, `round`).
///
/// All or nothing per response, as when they were stored one at a time: a response the rules
/// reject (its answers do not fit its design) is found while it is planned, before anything is
/// written, and is marked `error` with the original's message while its neighbours are stored. A
/// refusal that only PostgreSQL can make (a text too long for its column) fails the slice's
/// statements: the slice is then rolled back to before its rows and written response by
/// response, each behind a savepoint, so only the one at fault is marked `error`. A response
/// whose design cannot be fetched now is tried again later (backoff, up to `maxAttempts`), while
/// the rest of the batch goes on. Any number of replicas share the queue, and a worker that dies
/// mid-way leaves nothing half-stored: its transaction rolls back and the responses are claimed
/// again once the lease ends.
package final class ResponseProcessor: WorkQueue {
    package static let maxErrorLength = 977
    /// A hundred responses a batch: one commit and a dozen statements for a hundred, where one at
    /// a time took two commits and fifteen statements each. The lease outlasts a round's deadline
    /// (30 s, set where the worker is made) with a margin: a response claimed by a round that
    /// failed part-way (PostgreSQL went away) waits only that long before it is claimed again.
    ///
    /// A response whose design cannot be had is tried at most `maxAttempts` times: the waits
    /// double from 2 s to 15 minutes, so about five hours. Past that it is given up as `error`,
    /// where the console's failed-response triage shows it and an admin reprocesses it; a response
    /// that named a design no study can hold never loops, whatever study-metadata answers.
    package static let maxAttempts = 30
    package static let policy = DrainPolicy(batchSize: 100, lease: .seconds(45), retry: RetryPolicy(maxAttempts: maxAttempts))
    package var policy: DrainPolicy { Self.policy }
    package let queueName = "responses"
    /// Most of the answers' stored size one transaction loads: a batch of large responses is
    /// stored in several slices, so a round's memory stays bounded whatever participants send.
    package static let maxSliceBytes = 4 << 20

    package typealias Claimed = ProcessingStore.Claimed

    package let store: ProcessingStore
    package let designs: DesignSource
    package let tables: StudyTables
    package let writer: ResponseWriter
    package let metrics: ServiceMetrics
    package let logger: Logger
    /// Slices stored at once (`PROCESSING_STORES`), each in a transaction of its own. A slice's
    /// store runs in one PostgreSQL backend: one at a time left part of a 2-core machine idle;
    /// two at once kept both cores busy, after which a second replica added nothing, as the
    /// database had nothing left (make bench, "processing, 2 stores").
    package let storesInFlight: Int
    /// The study served last: a hint for taking turns, not state (another replica has its own).
    private let lastStudy = Mutex<String?>(nil)

    package init(
        client: PostgresClient, designs: DesignSource, tables: StudyTables, writer: ResponseWriter, metrics: ServiceMetrics,
        storesInFlight: Int = 1, logger: Logger
    ) {
        precondition(storesInFlight >= 1)
        self.storesInFlight = storesInFlight
        store = ProcessingStore(client: client, logger: logger)
        self.designs = designs
        self.tables = tables
        self.writer = writer
        self.metrics = metrics
        self.logger = logger
    }

    /// Most batches one round claims: a round ends within its deadline however large the backlog.
    package static let batchesPerRound = 20

    /// One round of the queue, as the worker runs it: `storesInFlight` pipelines, each claiming,
    /// preparing and storing batches one after another, with an equal share of the round's claims.
    package func round() async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { pipelines in
            let claims = max(1, Self.batchesPerRound / storesInFlight)
            for _ in 0..<storesInFlight {
                pipelines.addTask { try await self.pipeline(claims: claims) }
            }
            return try await pipelines.reduce(0, +)
        }
    }

    /// Batches claimed, prepared and stored one after another: while one slice is written in
    /// PostgreSQL the next is claimed, read and planned here (`prepare`), so neither side waits on
    /// the other.
    private func pipeline(claims: Int) async throws -> Int {
        var (prepared, queued) = try await nextSlice(queued: Queued(claimsLeft: claims))
        var total = 0
        while let slice = prepared {
            total += slice.claimed.count
            let waiting = queued
            async let following = nextSlice(queued: waiting)
            try await store(slice)
            (prepared, queued) = try await following
        }
        return total
    }

    /// Processes the next due response, if any; false when none was due (tests drive it so).
    @discardableResult
    package func processNext() async throws -> Bool {
        var one = Self.policy
        one.batchSize = 1
        return try await drain(queueName, policy: one, metrics: metrics, logger: logger) > 0
    }

    /// The slices of the last batch not yet prepared, and how many more batches the round may claim.
    private struct Queued: Sendable {
        var slices: [[Claimed]] = []
        var claimsLeft: Int
    }

    /// The next slice, prepared: from the batch claimed last, or from a new claim while the round
    /// may make one and the last batch was full.
    private func nextSlice(queued: Queued) async throws -> (Prepared?, Queued) {
        var queued = queued
        if queued.slices.isEmpty {
            guard queued.claimsLeft > 0 else { return (nil, queued) }
            let claimed = try await claim(limit: Self.policy.batchSize, lease: Self.policy.lease)
            // A batch that is not full drained the queue: the round claims no more after it.
            queued.claimsLeft = claimed.count == Self.policy.batchSize ? queued.claimsLeft - 1 : 0
            queued.slices = Self.slices(of: claimed)
        }
        guard !queued.slices.isEmpty else { return (nil, queued) }
        return (try await prepare(queued.slices.removeFirst()), queued)
    }

    package func claim(limit: Int, lease: Duration) async throws -> [Claimed] {
        let claimed = try await store.claim(limit: limit, lease: lease, afterStudy: lastStudy.withLock { $0 })
        if let last = claimed.last { lastStudy.withLock { $0 = last.studyKey } }
        return claimed
    }

    package func attempts(of response: Claimed) -> Int { response.attempts }

    /// One response alone (`processNext`): a slice of one, prepared and stored.
    package func perform(_ response: Claimed) async -> WorkResult<String?> {
        do {
            let prepared = try await prepare([response])
            if let failure = prepared.failures.first { return failure.result }
            return .done(try await storeTransaction(prepared)[response.id])
        } catch {
            return .failed(String(reflecting: error))
        }
    }

    /// Stores a prepared slice and settles each of its responses.
    private func store(_ slice: Prepared) async throws {
        try Task.checkCancellation()
        for (response, failure) in slice.failures { try await settle(response, with: failure) }
        guard !slice.ready.isEmpty else { return }
        let statuses: [Int64: String]
        do {
            statuses = try await storeTransaction(slice)
        } catch {
            for response in slice.ready { try await settle(response, with: .failed(String(reflecting: error))) }
            return
        }
        for response in slice.ready { try await settle(response, with: .done(statuses[response.id])) }
    }

    func settle(_ response: Claimed, with result: WorkResult<String?>) async throws {
        try await settle(response, with: result, queue: queueName, policy: Self.policy, metrics: metrics, logger: logger)
    }

    /// The batch cut into runs of at most `maxSliceBytes` of answers (at least one response each).
    package static func slices(of batch: [Claimed]) -> [[Claimed]] {
        var slices: [[Claimed]] = []
        var bytes = 0
        for response in batch {
            if slices.isEmpty || bytes + response.storedBytes > maxSliceBytes && !slices[slices.count - 1].isEmpty {
                slices.append([])
                bytes = 0
            }
            slices[slices.count - 1].append(response)
            bytes += response.storedBytes
        }
        return slices
    }

    /// Nothing left to record: `storeTransaction` set the status in the transaction that stored
    /// the rows, so the two can never disagree.
    package func complete(_ response: Claimed, with status: String?) async throws {}

    /// `processed`; `rejected` when the rules refused it (as a design the rules refuse is).
    package func outcome(of status: String?) -> String {
        switch status {
        case "processed": "processed"
        case nil: "skipped"
        default: "rejected"
        }
    }

    /// A design that cannot be had now waits (`retryAfter`); one the rules refuse makes the
    /// response an `error`, with the original's message.
    package func fail(_ response: Claimed, reason: String, retryAfter: Duration?) async throws {
        if let retryAfter {
            try await store.postpone(response.id, reason: reason, retryAfter: retryAfter)
        } else {
            try await store.reject(response.id, reason: reason)
        }
    }

    /// Out of attempts while its design still could not be had: `error`, saying so.
    package func giveUp(_ response: Claimed, reason: String, attempts: Int) async throws {
        try await store.reject(response.id, reason: "Given up after \(attempts) attempts; reprocess it once this is mended: \(reason)")
    }

    /// Whether `error` is the response's fault (stored as its error) rather than the moment's
    /// (a lost connection, shutting down: the transaction rolls back and the response is tried again).
    package static func isRejection(_ error: any Error) -> Bool {
        switch error {
        case is ResponseShredder.Failure, is SurveySchema.DesignError, is JSONValue.ParseError, is DecodingError: true
        case let postgres as PSQLError:
            // The server refused this response's values (a number out of range, say); not the
            // classes that mean the moment was wrong: connection (08), transaction rollback (40),
            // resources (53), operator intervention such as a shutdown (57), system errors (58).
            postgres.serverInfo?[.sqlState].map { !["08", "40", "53", "57", "58"].contains(String($0.prefix(2))) } ?? false
        default: false
        }
    }

    /// The error as the original stored it: its message, truncated like the original's column.
    package static func message(_ error: any Error) -> String {
        let text: String =
            switch error {
            case let failure as ResponseShredder.Failure: failure.description
            case let design as SurveySchema.DesignError: design.description
            case is JSONValue.ParseError, is DecodingError: "Unable to parse the stored response"
            // PostgreSQL's own words (a value too long for its column, say): about the participant's answer,
            // which researchers read in the responses anyway.
            case let postgres as PSQLError:
                postgres.serverInfo.flatMap { info in
                    info[.message].map { "\($0) (SQLSTATE \(info[.sqlState] ?? "?"))" }
                } ?? "\(error)"
            default: "\(error)"
            }
        return text.count > maxErrorLength ? String(text.prefix(maxErrorLength)) + "... (message truncated)" : text
    }
}
