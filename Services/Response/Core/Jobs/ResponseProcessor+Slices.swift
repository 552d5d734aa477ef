import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// A slice of a claimed batch, from its claim to its commit: prepared outside any transaction
/// (designs made ready, answers read and planned), then stored in one.
extension ResponseProcessor {
    /// A slice made ready to store.
    struct Prepared: Sendable {
        var claimed: [Claimed]
        /// Those whose design cannot be had now or is refused, with what becomes of them.
        var failures: [(response: Claimed, result: WorkResult<String?>)]
        /// Those whose design is ready, to be stored.
        var ready: [Claimed]
        var studies: [StudyPlan]
    }

    /// One study's responses of a slice, planned against its lists.
    struct StudyPlan: Sendable {
        var schema: String?
        var planned: [ResponseWriter.Planned]
        /// Responses the rules refused while they were planned, with their messages.
        var refused: [Int64: String]
    }

    /// An activity version of a study, whose design is made ready once per slice.
    private struct DesignKey: Hashable {
        var studyKey: String
        var activityId: String
        var version: String

        init(_ response: Claimed) {
            (studyKey, activityId, version) = (response.studyKey, response.activityId, response.version)
        }
    }

    /// Makes each design of the slice ready once, then reads and plans the responses whose
    /// design is ready, a study at a time.
    func prepare(_ slice: [Claimed]) async throws -> Prepared {
        var prepared = Prepared(claimed: slice, failures: [], ready: [], studies: [])
        var readyDesigns: [DesignKey: SageAnswers.ChoiceValues?] = [:]
        var designFailures: [DesignKey: WorkResult<String?>] = [:]
        var listed: [Int64: SageAnswers.ChoiceValues] = [:]
        for response in slice {
            let key = DesignKey(response)
            if readyDesigns[key] == nil, designFailures[key] == nil {
                if let failure = await ensureDesign(of: response) {
                    designFailures[key] = failure
                } else {
                    readyDesigns[key] = try await designs.sageChoices(
                        studyKey: key.studyKey, activityId: key.activityId, version: key.version)
                }
            }
            if let failure = designFailures[key] {
                prepared.failures.append((response, failure))
            } else {
                prepared.ready.append(response)
                if case .some(.some(let choices)) = readyDesigns[key] { listed[response.id] = choices }
            }
        }
        guard !prepared.ready.isEmpty else { return prepared }
        var studies: [String] = []
        var byStudy: [String: [ProcessingStore.Loaded]] = [:]
        for response in try await store.load(prepared.ready.map(\.id)) {
            if byStudy[response.studyKey] == nil { studies.append(response.studyKey) }
            byStudy[response.studyKey, default: []].append(response)
        }
        for studyKey in studies {
            let (schema, lists) = try await store.client.withConnection { connection in
                try await tables.lists(studyKey: studyKey, on: connection)
            }
            prepared.studies.append(Self.plan(byStudy[studyKey, default: []], schema: schema, lists: lists, listed: listed))
        }
        return prepared
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

    /// Each response's rows, or the reason the rules refuse it (planning only ever refuses the
    /// response itself: its answers, its list).
    /// `listed` holds, by response id, the choice values of a design imported from a Sage
    /// assessment (`SageAnswers.ChoiceValues`).
    static func plan(
        _ responses: [ProcessingStore.Loaded], schema: String?, lists: NamesInAnyCase<StudyTables.StoredList>,
        listed: [Int64: SageAnswers.ChoiceValues] = [:]
    ) -> StudyPlan {
        var plan = StudyPlan(schema: schema, planned: [], refused: [:])
        for response in responses {
            do {
                let data = try JSONValue.parse(response.data.utf8, budget: .responseAnswers)
                let row = try ResponseShredder(lists: lists, container: response.studyId, sageChoices: listed[response.id] ?? [:])
                    .plan(activityId: response.activityId, data: data)
                guard schema != nil else {
                    throw ResponseShredder.Failure(
                        description: "Invalid list '\(response.activityId)' for container '\(response.studyId)'")
                }
                plan.planned.append(ResponseWriter.Planned(
                    row: row, participantId: response.participantId, participantNumber: response.participantNumber, responseId: response.id))
            } catch {
                plan.refused[response.id] = message(error)
            }
        }
        return plan
    }

    /// Locks the slice's responses (those another worker has are left to it) and stores them
    /// with their status changes in one transaction; returns the status each locked one was given.
    func storeTransaction(_ slice: Prepared) async throws -> [Int64: String] {
        try await store.client.withTransaction(logger: logger) { connection -> [Int64: String] in
            let locked = try await store.lock(slice.ready.map(\.id), on: connection)
            var settlements: [ProcessingStore.Settlement] = []
            for study in slice.studies {
                for (id, message) in study.refused where locked.contains(id) { settlements.append(.error(id, message)) }
                let planned = study.planned.filter { locked.contains($0.responseId) }
                guard let schema = study.schema, !planned.isEmpty else { continue }
                let refused = try await write(planned, schema: schema, on: connection)
                for plan in planned {
                    settlements.append(refused[plan.responseId].map { .error(plan.responseId, $0) } ?? .processed(plan.responseId))
                }
            }
            try await store.settle(settlements, on: connection)
            for settlement in settlements where settlement.status == "error" {
                logger.info(
                    "response rejected", metadata: ["response_id": "\(settlement.id)", "error": "\(settlement.error ?? "")"])
            }
            return Dictionary(uniqueKeysWithValues: settlements.map { ($0.id, $0.status) })
        }
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
}
