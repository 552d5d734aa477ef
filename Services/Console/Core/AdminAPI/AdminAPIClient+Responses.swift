import Foundation
import Logging
import NIOHTTP1
import StudyModels

/// The response service's admin API for a study's data: its tables as grids, its responses and
/// their processing, forwarding, participant properties and exports.
extension AdminAPIClient {
    private static func responseStudy(_ studyId: String) -> String { "/admin/v1/studies/\(segment(studyId))" }

    package func responseTables(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ResponseTableList {
        try await json(.GET, Self.responseStudy(studyId) + "/tables", on: .response, token: token, as: ResponseTableList.self, logger: logger)
    }

    /// `query`: the grid's parameters (`sort`, `order`, `participant`, `from`, `to`, `parent`,
    /// `limit`, `after`); empty values are left out.
    package func tableRows(
        _ table: String, of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> TableRowsPage {
        try await json(
            .GET, Self.responseStudy(studyId) + "/tables/\(Self.segment(table))/rows" + Self.queryString(query), on: .response,
            token: token, as: TableRowsPage.self, logger: logger)
    }

    /// `query`: `status`, `participant`, `appTokenSHA256`, `after`, `limit`.
    /// The participant numbers (the data's `ParticipantId`) of the apps whose participant id
    /// hashes to one of `hashes`: the link between registration's record of a person and the data.
    package func participantNumbers(of studyId: String, hashes: [String], token: String, logger: Logger)
        async throws(AdminAPIError) -> [String: Int64]
    {
        guard !hashes.isEmpty else { return [:] }
        let found = try await json(
            .GET, Self.responseStudy(studyId) + "/participant-numbers" + Self.queryString([("appTokenSHA256", hashes.joined(separator: ","))]),
            on: .response, token: token, as: ParticipantNumbers.self, logger: logger)
        return Dictionary(found.participants.map { ($0.appTokenSHA256, $0.participantId) }, uniquingKeysWith: { first, _ in first })
    }

    /// The hash that links participant `number` to registration's record, nil when none does.
    package func participantLink(_ number: Int64, of studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> String?
    {
        try await json(
            .GET, Self.responseStudy(studyId) + "/participant-numbers" + Self.queryString([("participant", String(number))]),
            on: .response, token: token, as: ParticipantNumbers.self, logger: logger
        ).participants.first?.appTokenSHA256
    }

    package func responses(of studyId: String, query: [(String, String)], token: String, logger: Logger)
        async throws(AdminAPIError) -> [ResponseSummary]
    {
        try await json(
            .GET, Self.responseStudy(studyId) + "/responses" + Self.queryString(query), on: .response, token: token,
            as: ResponseSummaryList.self, logger: logger
        ).responses
    }

    package func dailyResponses(of studyId: String, days: Int, token: String, logger: Logger) async throws(AdminAPIError)
        -> DailyResponses
    {
        try await json(
            .GET, Self.responseStudy(studyId) + "/responses/daily?days=\(days)", on: .response, token: token,
            as: DailyResponses.self, logger: logger)
    }

    /// `againstVersion`: a later version of each response's activity to process it against
    /// (nil: the version it was sent for).
    package func reprocess(_ ids: [Int64], in studyId: String, againstVersion: String? = nil, token: String, logger: Logger)
        async throws(AdminAPIError) -> ReprocessOutcome
    {
        try await json(
            .POST, Self.responseStudy(studyId) + "/responses/reprocess", on: .response, token: token,
            body: Self.encoded(ReprocessRequest(ids: ids, againstVersion: againstVersion)), as: ReprocessOutcome.self,
            logger: logger)
    }

    package func forwarding(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ForwardingView {
        try await json(.GET, Self.responseStudy(studyId) + "/forwarding", on: .response, token: token, as: ForwardingView.self, logger: logger)
    }

    /// `settings`: `type` and the fields of that type, as the admin API takes them.
    package func setForwarding(_ settings: [String: String], in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> ForwardingView
    {
        try await json(
            .PUT, Self.responseStudy(studyId) + "/forwarding", on: .response, token: token, body: Self.encoded(settings),
            as: ForwardingView.self, logger: logger)
    }

    /// A CSV of participant-property values per enrollment token, all or nothing.
    package func uploadParticipantProperties(csv: String, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError)
    {
        _ = try await send(
            .PUT, Self.responseStudy(studyId) + "/participant-properties", on: .response, token: token, body: Array(csv.utf8),
            contentType: "text/csv", logger: logger)
    }

    package func exportPath(_ studyId: String, format: String) -> String {
        Self.responseStudy(studyId) + "/export.\(format)"
    }
}
