import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Synchronization

/// Processes pending responses into the study's tables (docs/response-api.md, Processing into
/// tables), as a work queue, in batches. A round claims up to `policy.batchSize` due responses
/// with a lease (`ProcessingStore.claim`: `FOR UPDATE SKIP LOCKED`, studies taking turns, their
/// next attempt moved past the lease), makes each activity version's design ready once (outside
/// any transaction: it may take a call to study-metadata), and then stores them in one
/// transaction per slice of the batch: every list's rows of every response in one statement
/// each, and every status change in one more, so one commit serves a whole slice.
///
/// All or nothing per response, as when they were stored one at a time: a response the rules
/// reject (its answers do not fit its design) is found while it is planned, before anything is
/// written, and is marked `error` with the original's message while its neighbours are stored. A
/// refusal that only PostgreSQL can make (a number out of its column's range) fails the slice's
/// statements: the slice is then rolled back to before its rows and written response by
/// response, each behind a savepoint, so only the one at fault is marked `error`. A response
/// whose design cannot be fetched now is tried again later (backoff, never given up), while the
/// rest of the batch goes on. Any number of replicas share the queue, and a worker that dies
/// mid-way leaves nothing half-stored: its transaction rolls back and the responses are claimed
/// again once the lease ends.
package final class ResponseProcessor: WorkQueue {
    package static let maxErrorLength = 977
    /// A hundred responses a round: one commit and a dozen statements for a hundred, where one at
    /// a time took two commits and fifteen statements each. The lease outlasts a round's deadline
    /// (30 s, set where the worker is made) with a margin: a response claimed by a round that
    /// failed part-way (PostgreSQL went away) waits only that long before it is claimed again.
    package static let policy = DrainPolicy(batchSize: 100, lease: .seconds(45), retry: RetryPolicy(maxAttempts: nil))
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
    /// The study served last: a hint for taking turns, not state (another replica has its own).
    private let lastStudy = Mutex<String?>(nil)

    package init(
        client: PostgresClient, designs: DesignSource, tables: StudyTables, writer: ResponseWriter, metrics: ServiceMetrics,
        logger: Logger
    ) {
        store = ProcessingStore(client: client, logger: logger)
        self.designs = designs
        self.tables = tables
        self.writer = writer
        self.metrics = metrics
        self.logger = logger
    }

    /// One round of the queue, as the worker runs it.
    package func round() async throws -> Int {
        try await drain("responses", policy: Self.policy, metrics: metrics, logger: logger)
    }

    /// Processes the next due response, if any; false when none was due (tests drive it so).
    @discardableResult
    package func processNext() async throws -> Bool {
        var one = Self.policy
        one.batchSize = 1
        return try await drain("responses", policy: one, metrics: metrics, logger: logger) > 0
    }

    package func claim(limit: Int, lease: Duration) async throws -> [Claimed] {
        let claimed = try await store.claim(limit: limit, lease: lease, afterStudy: lastStudy.withLock { $0 })
        if let last = claimed.last { lastStudy.withLock { $0 = last.studyKey } }
        return claimed
    }

    package func attempts(of response: Claimed) -> Int { response.attempts }

    /// One response alone: the batch path with a batch of one.
    package func perform(_ response: Claimed) async -> WorkResult<String?> {
        var result: WorkResult<String?> = .failed("the response was not settled")
        do {
            try await work([response]) { _, outcome in result = outcome }
        } catch {
            return .failed(String(reflecting: error))
        }
        return result
    }

    /// Makes each design of the batch ready once, then stores the responses whose design is
    /// ready, a slice at a time. `done` carries the status a response was given (nil: another
    /// worker had it).
    package func work(_ batch: [Claimed], settle: (Claimed, WorkResult<String?>) async throws -> Void) async throws {
        var ready: [Claimed] = []
        var readyDesigns: Set<DesignKey> = []
        var designFailures: [DesignKey: WorkResult<String?>] = [:]
        for response in batch {
            let key = DesignKey(response)
            if !readyDesigns.contains(key), designFailures[key] == nil {
                if let failure = await ensureDesign(of: response) { designFailures[key] = failure } else { readyDesigns.insert(key) }
            }
            if let failure = designFailures[key] {
                try await settle(response, failure)
            } else {
                ready.append(response)
            }
        }
        for slice in Self.slices(of: ready) {
            try Task.checkCancellation()
            let statuses: [Int64: String]
            do {
                statuses = try await storeSlice(slice)
            } catch {
                for response in slice { try await settle(response, .failed(String(reflecting: error))) }
                continue
            }
            for response in slice { try await settle(response, .done(statuses[response.id])) }
        }
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

    /// An activity version of a study, whose design is made ready once per batch.
    private struct DesignKey: Hashable {
        var studyKey: String
        var activityId: String
        var version: String

        init(_ response: Claimed) {
            (studyKey, activityId, version) = (response.studyKey, response.activityId, response.version)
        }
    }

    /// Nil when the design is ready; else what becomes of the responses that need it.
    private func ensureDesign(of response: Claimed) async -> WorkResult<String?>? {
        do {
            try await designs.ensureApplied(
                studyKey: response.studyKey, studyId: response.studyId, activityId: response.activityId,
                version: response.version)
            return nil
        } catch let error as DesignSource.Unavailable {
            return .failed(error.description)
        } catch {
            return Self.isRejection(error) ? .rejected(Self.message(error)) : .failed(String(reflecting: error))
        }
    }

    /// Nothing left to record: `storeSlice` set the status in the transaction that stored the
    /// rows, so the two can never disagree.
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

    /// Locks the slice's responses (those another worker has are left to it) and stores them
    /// with their status changes in one transaction; returns the status each locked one was given.
    private func storeSlice(_ slice: [Claimed]) async throws -> [Int64: String] {
        try await store.client.withTransaction(logger: logger) { connection -> [Int64: String] in
            let locked = try await store.lock(slice.map(\.id), on: connection)
            var settlements: [ProcessingStore.Settlement] = []
            var studies: [String] = []
            var byStudy: [String: [ProcessingStore.Locked]] = [:]
            for response in locked {
                if byStudy[response.studyKey] == nil { studies.append(response.studyKey) }
                byStudy[response.studyKey, default: []].append(response)
            }
            for studyKey in studies {
                settlements += try await storeStudy(studyKey, byStudy[studyKey]!, on: connection)
            }
            try await store.settle(settlements, on: connection)
            for settlement in settlements where settlement.status == "error" {
                logger.info(
                    "response rejected", metadata: ["response_id": "\(settlement.id)", "error": "\(settlement.error ?? "")"])
            }
            return Dictionary(uniqueKeysWithValues: settlements.map { ($0.id, $0.status) })
        }
    }

    /// One study's responses of a slice: planned against its lists, the plans written together.
    private func storeStudy(_ studyKey: String, _ responses: [ProcessingStore.Locked], on connection: PostgresConnection)
        async throws -> [ProcessingStore.Settlement]
    {
        let (schema, lists) = try await tables.lists(studyKey: studyKey, on: connection)
        var settlements: [ProcessingStore.Settlement] = []
        var planned: [ResponseWriter.Planned] = []
        for response in responses {
            do {
                let data = try JSONValue.parse(response.data.utf8)
                let plan = try ResponseShredder(lists: lists, container: response.studyId).plan(
                    activityId: response.activityId, data: data)
                guard schema != nil else {
                    throw ResponseShredder.Failure(
                        description: "Invalid list '\(response.activityId)' for container '\(response.studyId)'")
                }
                planned.append(ResponseWriter.Planned(row: plan, participantId: response.participantId, responseId: response.id))
            } catch {
                // Planning only ever refuses the response itself (its answers, its list).
                settlements.append(.error(response.id, Self.message(error)))
            }
        }
        guard let schema, !planned.isEmpty else { return settlements }
        let refused = try await write(planned, schema: schema, on: connection)
        for plan in planned {
            settlements.append(refused[plan.responseId].map { .error(plan.responseId, $0) } ?? .processed(plan.responseId))
        }
        return settlements
    }

    /// Writes the plans together; when PostgreSQL refuses a value, rolls them back and writes
    /// them one by one, each behind a savepoint, so only the responses at fault are left out.
    /// Returns their messages by response id.
    private func write(_ planned: [ResponseWriter.Planned], schema: String, on connection: PostgresConnection)
        async throws -> [Int64: String]
    {
        try await connection.query("SAVEPOINT store_batch", logger: logger)
        do {
            try await writer.insert(planned, schema: schema, on: connection)
            try await connection.query("RELEASE SAVEPOINT store_batch", logger: logger)
            return [:]
        } catch let refusal where Self.isRejection(refusal) {
            try await connection.query("ROLLBACK TO SAVEPOINT store_batch", logger: logger)
            guard planned.count > 1 else { return [planned[0].responseId: Self.message(refusal)] }
        }
        var refused: [Int64: String] = [:]
        for plan in planned {
            try await connection.query("SAVEPOINT store_response", logger: logger)
            do {
                try await writer.insert([plan], schema: schema, on: connection)
                try await connection.query("RELEASE SAVEPOINT store_response", logger: logger)
            } catch let refusal where Self.isRejection(refusal) {
                // Nothing of this response stays in the study's tables.
                try await connection.query("ROLLBACK TO SAVEPOINT store_response", logger: logger)
                refused[plan.responseId] = Self.message(refusal)
            }
        }
        return refused
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
