import FHIR
import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The consents participants signed, as the FHIR API reads them (docs/fhir.md, Consent): the
/// records are registration's, read through its signed internal calls page by page; the
/// participant each belongs to is this service's, found by the hash of the participant id the
/// app holds.
package struct ConsentRecordSource: Sendable {
    /// Registration did not answer, or not as its endpoint says.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    package let client: PostgresClient
    package let internalClient: InternalClient
    package let logger: Logger

    package init(client: PostgresClient, internalClient: InternalClient, logger: Logger) {
        self.client = client
        self.internalClient = internalClient
        self.logger = logger
    }

    /// The consents a Consent search finds, in the order of their ids; the id the next page starts
    /// after (nil on the last page).
    package func consents(studyKey: String, studyId: String, search: FHIRSearch) async throws -> FHIRStore.Page<ConsentResources.Consent> {
        guard var query = try await query(studyKey: studyKey, search: search) else { return FHIRStore.Page(resources: [], nextAfter: nil) }
        query.limit = min(search.count, ConsentRecordQuery.maxLimit - 1) + 1
        let records = try await call(studyId: studyId, query).records
        let participants = try await participants(studyKey: studyKey, hashes: records.map(\.participantTokenSHA256))
        let kept = records.prefix(search.count)
        let consents = kept.compactMap { record -> ConsentResources.Consent? in
            // Registration links a record to a participant id this service gave; one it does not
            // know (a test run's, since removed) has no Patient to belong to.
            guard let participantId = participants[ScalarKey(record.participantTokenSHA256)] else { return nil }
            return ConsentResources.Consent(
                recordId: record.id, participantId: participantId, studyId: studyId, version: record.version, state: record.state,
                sharing: record.sharing, signedAt: record.signedAt, endedAt: record.endedAt, pdfBytes: record.pdfBytes,
                hasPDF: record.pdfSHA256 != nil, completed: record.completed)
        }
        return FHIRStore.Page(resources: consents, nextAfter: records.count > search.count ? kept.last?.id : nil)
    }

    /// How many consents a search finds (`_summary=count`).
    package func count(studyKey: String, studyId: String, search: FHIRSearch) async throws -> Int {
        guard var query = try await query(studyKey: studyKey, search: search) else { return 0 }
        query.counting = true
        return try await call(studyId: studyId, query).count ?? 0
    }

    /// Record `id` of the study, when it belongs to one of its participants.
    package func consent(_ id: Int64, studyKey: String, studyId: String) async throws -> ConsentResources.Consent? {
        var search = FHIRSearch(type: "Consent")
        search.ids = [id]
        search.count = 1
        return try await consents(studyKey: studyKey, studyId: studyId, search: search).resources.first
    }

    /// The signed PDF of record `id` of the study, as registration checked it against its hash;
    /// nil when the study has no such record or it has no PDF.
    package func pdf(_ id: Int64, studyId: String) async throws -> [UInt8]? {
        let answer: InternalAnswer<OpaqueBody>
        do {
            answer = try await internalClient.call(InternalCalls.consentPDF, ["studyId": studyId, "consentId": String(id)], logger: logger)
        } catch {
            if !Task.isCancelled { logger.warning("a consent PDF could not be read", metadata: ["error": "\(error)"]) }
            throw Unavailable(description: "Registration cannot give the signed consent now")
        }
        switch answer {
        case .answered(let body): return body.bytes
        case .refused: return nil
        }
    }

    /// The registration query a search stands for; nil when nothing can match.
    private func query(studyKey: String, search: FHIRSearch) async throws -> ConsentRecordQuery? {
        if search.nothing { return nil }
        var query = ConsentRecordQuery(after: search.after, limit: 1, ids: search.ids)
        if let status = search.status {
            guard let state = ConsentResources.state(status: status) else { return nil }
            query.state = state
        }
        if !search.lastUpdated.isEmpty {
            let (from, before) = search.lastUpdatedRange
            query.changed = ConsentRecordQuery.Changed(ge: from, lt: before)
        }
        if let participant = search.participant {
            guard let hash = try await tokenHash(of: participant, studyKey: studyKey) else { return nil }
            query.participantTokenSHA256s = [hash]
        }
        return query
    }

    private func call(studyId: String, _ query: ConsentRecordQuery) async throws -> ConsentRecordPage {
        let answer: InternalAnswer<ConsentRecordPage>
        do {
            answer = try await internalClient.call(InternalCalls.consentRecords, ["studyId": studyId], body: query, logger: logger)
        } catch {
            if !Task.isCancelled { logger.warning("consent records could not be read", metadata: ["error": "\(error)"]) }
            throw Unavailable(description: "Registration cannot give the study's consents now")
        }
        return try answer.reply(from: .registration)
    }

    /// The hash of the participant id the participant numbered `id` in the study was given at enrollment.
    private func tokenHash(of id: Int64, studyKey: String) async throws -> String? {
        let rows = try await client.query(
            "SELECT enrolled_token_sha256 FROM participants WHERE study_key = \(studyKey) AND number = \(id)", logger: logger)
        for try await hash in rows.decode(String?.self) { return hash }
        return nil
    }

    /// The numbers of the study's participants given these participant ids' hashes, by hash.
    private func participants(studyKey: String, hashes: [String]) async throws -> [ScalarKey: Int64] {
        guard !hashes.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT number, enrolled_token_sha256 FROM participants
            WHERE study_key = \(studyKey) AND enrolled_token_sha256 = ANY(\(hashes))
            """, logger: logger)
        var found: [ScalarKey: Int64] = [:]
        for try await (id, hash) in rows.decode((Int64, String).self) { found[ScalarKey(hash)] = id }
        return found
    }
}
