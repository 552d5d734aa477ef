import FHIR
import Foundation
import JSONText
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// What the FHIR API reads of a study (docs/fhir.md): its enrollments and stored responses, each
/// only within the study asked about.
package struct FHIRStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger
    /// Shared by every copy of the store: designs decoded once serve every later page.
    package let decodedDesigns: DecodedDesigns
    package let pooling: DatabaseSettings.Pooling

    package init(
        client: PostgresClient, pooling: DatabaseSettings.Pooling = .session, logger: Logger, decodedDesigns: DecodedDesigns = DecodedDesigns()
    ) {
        self.client = client
        self.pooling = pooling
        self.logger = logger
        self.decodedDesigns = decodedDesigns
    }

    /// The enrollment of the participant numbered `id` in the study (FHIR's Patient id is the
    /// participant's number, as every table's ParticipantId); nil when the study has none.
    package func enrollment(_ id: Int64, studyKey: String, studyId: String) async throws -> StudyResources.Enrollment? {
        try await enrollments(ids: [id], studyKey: studyKey, studyId: studyId).first
    }

    /// Stored response `id` of the study, with the design of the version it answered when this
    /// service has it; nil when the study has no response by that id.
    package func response(_ id: Int64, studyKey: String, studyId: String) async throws -> StoredResponse? {
        let rows = try await client.run(StoredResponseStatement(studyKey: studyKey, id: id), pooling: pooling, logger: logger)
        var found: UnparsedResponse?
        for try await (participantId, activityId, version, runId, language, data, receivedAt) in rows {
            let response = StoredResponse(
                id: id, studyId: studyId, participantId: participantId, activityId: activityId, version: version, runId: runId,
                data: .object([:]), receivedAt: receivedAt, design: nil, language: language)
            found = UnparsedResponse(response: response, data: data)
        }
        guard var found else { return nil }
        found.response.design = try await designs(studyKey: studyKey, of: [found.response])[
            Self.designKey(found.response.activityId, found.response.version)]
        return found.parsed()
    }

    /// A page of a search: the resources in the order of their ids, and the id the next page
    /// starts after (nil on the last page).
    package struct Page<Resource: Sendable>: Sendable {
        package var resources: [Resource]
        package var nextAfter: Int64?
    }

    /// The participants a Patient or ResearchSubject search finds.
    package func enrollments(studyKey: String, studyId: String, search: FHIRSearch) async throws -> Page<StudyResources.Enrollment> {
        guard let rows = try await enrollmentRows(studyKey: studyKey, search: search, counting: false) else {
            return Page(resources: [], nextAfter: nil)
        }
        var found: [StudyResources.Enrollment] = []
        for try await (id, status, enrolledAt, withdrawnAt) in rows.decode((Int64, String, Date, Date?).self) {
            found.append(StudyResources.Enrollment(
                participantId: id, studyId: studyId, withdrawn: status == "withdrawn", enrolledAt: enrolledAt, withdrawnAt: withdrawnAt))
        }
        return Self.page(found, count: search.count, id: \.participantId)
    }

    /// The rows of an enrollment search, or their count; nil when nothing can match.
    private func enrollmentRows(studyKey: String, search: FHIRSearch, counting: Bool) async throws -> PostgresRowSequence? {
        if search.nothing { return nil }
        let (from, before) = search.lastUpdatedRange
        let identifier = search.identifier.flatMap(FHIRSearch.number)
        if search.identifier != nil, identifier == nil { return nil }
        let status: String?
        switch search.status {
        case nil: status = nil
        case "on-study"?: status = "enrolled"
        case "withdrawn"?: status = "withdrawn"
        default: return nil
        }
        let ids = search.ids
        let limit: Int? = counting ? nil : search.count + 1
        // Two fixed texts, never input: what is selected, and the order of a page.
        return try await client.query(
            """
            SELECT \(unescaped: counting ? "count(*)" : "number, status, enrolled_at, withdrawn_at") FROM participants
            WHERE study_key = \(studyKey) AND number > \(search.after ?? 0)
              AND (\(ids)::bigint[] IS NULL OR number = ANY(\(ids)::bigint[]))
              AND (\(identifier)::bigint IS NULL OR number = \(identifier))
              AND (\(status)::text IS NULL OR status = \(status))
              AND (\(from)::timestamptz IS NULL OR coalesce(withdrawn_at, enrolled_at) >= \(from))
              AND (\(before)::timestamptz IS NULL OR coalesce(withdrawn_at, enrolled_at) < \(before))
            \(unescaped: counting ? "" : "ORDER BY number") LIMIT \(limit)
            """, logger: logger)
    }

    /// The enrollments of `ids` in the study (what `_include` and `_revinclude` add to a page).
    package func enrollments(ids: [Int64], studyKey: String, studyId: String) async throws -> [StudyResources.Enrollment] {
        guard !ids.isEmpty else { return [] }
        var search = FHIRSearch(type: "Patient")
        search.ids = ids
        search.count = ids.count
        return try await enrollments(studyKey: studyKey, studyId: studyId, search: search).resources
    }

    /// A page's rows may carry whole responses: past this many bytes of answers the page ends
    /// early, and the next page goes on from there.
    package static let maxPageBytes = 16 << 20

    /// The stored responses a QuestionnaireResponse search finds.
    package func responses(studyKey: String, studyId: String, search: FHIRSearch) async throws -> Page<StoredResponse> {
        let page = try await unparsedResponses(studyKey: studyKey, studyId: studyId, search: search)
        return Page(resources: page.resources.map { $0.parsed() }, nextAfter: page.nextAfter)
    }

    /// A stored response whose answers are still the text the database keeps: an export parses
    /// them where it writes them, a slice of the page on each core, while the next page is read.
    package struct UnparsedResponse: Sendable {
        /// Everything but `data`, which is empty until parsed.
        package var response: StoredResponse
        package var data: ByteBuffer

        /// The response with its answers; answers that no longer parse (which what was stored
        /// did when received) are shown as none.
        package func parsed() -> StoredResponse {
            var parsed = response
            parsed.data = (try? JSONValue.parse(data.readableBytesView, budget: .responseAnswers)) ?? .object([:])
            return parsed
        }
    }

    package func unparsedResponses(studyKey: String, studyId: String, search: FHIRSearch) async throws -> Page<UnparsedResponse> {
        guard let rows = try await responseRows(studyKey: studyKey, search: search, counting: false) else {
            return Page(resources: [], nextAfter: nil)
        }
        var found: [UnparsedResponse] = []
        var bytes = 0
        var endedEarly = false
        for try await row in rows.decode((Int64, Int64, String, String, String?, String?, ByteBuffer, Date).self) {
            bytes += row.6.readableBytes
            if !found.isEmpty, bytes > Self.maxPageBytes {
                // Ends here: this row starts the next page.
                endedEarly = true
                break
            }
            let response = StoredResponse(
                id: row.0, studyId: studyId, participantId: row.1, activityId: row.2, version: row.3, runId: row.4, data: .object([:]),
                receivedAt: row.7, design: nil, language: row.5)
            found.append(UnparsedResponse(response: response, data: row.6))
        }
        // A page's responses answer a few versions: each design is read and decoded once.
        let designs = try await designs(studyKey: studyKey, of: found.map(\.response))
        for index in found.indices {
            let response = found[index].response
            found[index].response.design = designs[Self.designKey(response.activityId, response.version)]
        }
        if endedEarly { return Page(resources: found, nextAfter: found.last?.response.id) }
        return Self.page(found, count: search.count, id: \.response.id)
    }

    /// A version's key among `designs`: its activity id and version joined by NUL, which neither
    /// holds.
    private static func designKey(_ activityId: String, _ version: String) -> ScalarKey {
        ScalarKey("\(activityId)\u{0}\(version)")
    }

    /// The designs this service keeps of the versions `responses` answer, by `designKey`: those
    /// decoded lately from memory, the rest read in one query and kept there.
    private func designs(studyKey: String, of responses: [StoredResponse]) async throws -> [ScalarKey: ActivityDesign] {
        var designs: [ScalarKey: ActivityDesign] = [:]
        var wanted: [ScalarKey: (activityId: String, version: String)] = [:]
        for response in responses {
            let key = Self.designKey(response.activityId, response.version)
            guard designs[key] == nil, wanted[key] == nil else { continue }
            if let design = decodedDesigns.design(studyKey: studyKey, activityId: response.activityId, version: response.version) {
                designs[key] = design
            } else {
                wanted[key] = (response.activityId, response.version)
            }
        }
        guard !wanted.isEmpty else { return designs }
        let pairs = Array(wanted.values)
        let rows = try await client.query(
            """
            SELECT d.activity_id, d.version, d.design::text FROM activity_designs d
            JOIN unnest(\(pairs.map(\.activityId))::text[], \(pairs.map(\.version))::text[]) AS wanted(activity_id, version)
              ON d.activity_id = wanted.activity_id AND d.version = wanted.version
            WHERE d.study_key = \(studyKey)
            """, logger: logger)
        for try await (activityId, version, design) in rows.decode((String, String, String).self) {
            guard let design = try? InternalCoding.decoder.decode(ActivityReply.self, from: Data(design.utf8)).activity else { continue }
            decodedDesigns.keep(design, studyKey: studyKey, activityId: activityId, version: version)
            designs[Self.designKey(activityId, version)] = design
        }
        return designs
    }

    /// The rows of a response search, or their count; nil when nothing can match.
    private func responseRows(studyKey: String, search: FHIRSearch, counting: Bool) async throws -> PostgresRowSequence? {
        if search.nothing { return nil }
        let (from, before) = search.lastUpdatedRange
        var participant = search.participant
        var activityId = search.activityId
        var run: String?
        if let identifier = search.identifier {
            // `participant/activity/run`, as the resources carry it.
            let parts = identifier.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let number = FHIRSearch.number(parts[0]), participant == nil || participant == number,
                activityId == nil || activityId == parts[1]
            else { return nil }
            (participant, activityId, run) = (number, parts[1], parts[2])
        }
        if let status = search.status, status != "completed" { return nil }
        let ids = search.ids
        let version = search.version
        let limit: Int? = counting ? nil : search.count + 1
        // Fixed texts, never input: what is selected, and the order of a page.
        let selected =
            counting
            ? "count(*)"
            : """
            r.id, (SELECT p.number FROM participants p WHERE p.id = r.participant_id), r.activity_id, r.activity_version,
            r.activity_run_id, r.language, r.data::text, r.received_at
            """
        return try await client.query(
            """
            SELECT \(unescaped: selected) FROM responses r
            WHERE r.study_key = \(studyKey) AND r.id > \(search.after ?? 0)
              AND (\(ids)::bigint[] IS NULL OR r.id = ANY(\(ids)::bigint[]))
              AND (\(participant)::bigint IS NULL OR r.participant_id = (
                  SELECT id FROM participants WHERE study_key = \(studyKey) AND number = \(participant)))
              AND (\(activityId)::text IS NULL OR r.activity_id = \(activityId))
              AND (\(version)::text IS NULL OR r.activity_version = \(version))
              AND (\(run)::text IS NULL OR r.activity_run_id = \(run))
              AND (\(from)::timestamptz IS NULL OR r.received_at >= \(from))
              AND (\(before)::timestamptz IS NULL OR r.received_at < \(before))
            \(unescaped: counting ? "" : "ORDER BY r.id") LIMIT \(limit)
            """, logger: logger)
    }

    /// How many resources a search finds (`_summary=count`): the same filters, counted.
    package func count(studyKey: String, search: FHIRSearch) async throws -> Int {
        let rows =
            search.type == "QuestionnaireResponse"
            ? try await responseRows(studyKey: studyKey, search: search, counting: true)
            : try await enrollmentRows(studyKey: studyKey, search: search, counting: true)
        guard let rows else { return 0 }
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    private static func page<Resource>(_ found: [Resource], count: Int, id: (Resource) -> Int64) -> Page<Resource> {
        guard found.count > count else { return Page(resources: found, nextAfter: nil) }
        let kept = Array(found.prefix(count))
        return Page(resources: kept, nextAfter: kept.last.map(id))
    }
}
