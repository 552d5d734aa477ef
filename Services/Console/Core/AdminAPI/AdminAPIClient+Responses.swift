import AdminContracts
import Foundation
import Logging
import ServiceKit
import StudyModels

/// The response service's admin API for a study's data: its tables as grids, its responses and
/// their processing, forwarding, participant properties and exports.
extension AdminAPIClient {
    package func responseTables(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ResponseTableList {
        try await call(AdminCalls.responseTables, ["studyId": studyId], token: token, logger: logger)
    }

    /// `query`: the grid's parameters (`sort`, `order`, `participant`, `from`, `to`, `parent`,
    /// `limit`, `after`); empty values are left out.
    package func tableRows(
        _ table: String, of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> TableRowsPage {
        try await call(AdminCalls.tableRows, ["studyId": studyId, "table": table], query: query, token: token, logger: logger)
    }

    /// The participant numbers (the data's `ParticipantId`) of the apps whose participant id
    /// hashes to one of `hashes`: the link between registration's record of a person and the data.
    package func participantNumbers(of studyId: String, hashes: [String], token: String, logger: Logger)
        async throws(AdminAPIError) -> [String: Int64]
    {
        // A hundred to a lookup, as the response service takes them (a page of invitations has more).
        let unique = Array(Set(hashes)).sorted()
        var numbers: [String: Int64] = [:]
        for start in stride(from: 0, to: unique.count, by: 100) {
            let part = unique[start..<min(start + 100, unique.count)]
            let found = try await call(
                AdminCalls.participantNumbers, ["studyId": studyId], query: [("appTokenSHA256", part.joined(separator: ","))], token: token,
                logger: logger)
            for entry in found.participants where numbers[entry.appTokenSHA256] == nil { numbers[entry.appTokenSHA256] = entry.participantId }
        }
        return numbers
    }

    /// The hash that links participant `number` to registration's record, nil when none does.
    package func participantLink(_ number: Int64, of studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> String?
    {
        try await call(
            AdminCalls.participantNumbers, ["studyId": studyId], query: [("participant", String(number))], token: token, logger: logger
        ).participants.first?.appTokenSHA256
    }

    /// One participant's number, link hash, latest responses and Sage archives, in one call (the
    /// participant's page).
    package func participantData(
        _ participant: DataParticipantKey, of studyId: String, responses: Int, archives: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantDataReply {
        try await call(
            AdminCalls.participantData, ["studyId": studyId],
            query: [participant.query, ("limit", String(responses)), ("archives", String(archives))], token: token, logger: logger)
    }

    /// `query`: `status`, `participant`, `appTokenSHA256`, `after`, `limit`.
    package func responses(of studyId: String, query: [(String, String)], token: String, logger: Logger)
        async throws(AdminAPIError) -> [ResponseSummary]
    {
        try await call(AdminCalls.responses, ["studyId": studyId], query: query, token: token, logger: logger).responses
    }

    package func dailyResponses(of studyId: String, days: Int, token: String, logger: Logger) async throws(AdminAPIError)
        -> DailyResponses
    {
        try await call(AdminCalls.dailyResponses, ["studyId": studyId], query: [("days", String(days))], token: token, logger: logger)
    }

    /// `againstVersion`: a later version of each response's activity to process it against
    /// (nil: the version it was sent for).
    package func reprocess(_ ids: [Int64], in studyId: String, againstVersion: String? = nil, token: String, logger: Logger)
        async throws(AdminAPIError) -> ReprocessOutcome
    {
        try await call(
            AdminCalls.reprocess, ["studyId": studyId], body: ReprocessRequest(ids: ids, againstVersion: againstVersion), token: token,
            logger: logger)
    }

    package func forwarding(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ForwardingView {
        try await call(AdminCalls.forwarding, ["studyId": studyId], token: token, logger: logger)
    }

    /// `settings`: `type` and the fields of that type, as the admin API takes them.
    package func setForwarding(_ settings: [String: String], in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> ForwardingView
    {
        try await call(AdminCalls.setForwarding, ["studyId": studyId], body: ForwardingSettings(settings), token: token, logger: logger)
    }

    /// A CSV of participant-property values per enrollment token, all or nothing.
    package func uploadParticipantProperties(csv: String, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError)
    {
        _ = try await call(AdminCalls.participantProperties, ["studyId": studyId], body: CSVText(csv), token: token, logger: logger)
    }

    /// The study's SMART Backend Services clients of the FHIR API (docs/fhir.md, Authorisation).
    package func fhirClients(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> [SMARTClientView] {
        try await call(AdminCalls.smartClients, ["studyId": studyId], token: token, logger: logger).clients
    }

    package func registerFHIRClient(_ registration: SMARTClientRegistration, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> SMARTClientView
    {
        try await call(AdminCalls.registerSMARTClient, ["studyId": studyId], body: registration, token: token, logger: logger)
    }

    /// Its tokens stop at once.
    package func revokeFHIRClient(_ clientId: String, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError) {
        _ = try await call(AdminCalls.revokeSMARTClient, ["studyId": studyId, "clientId": clientId], token: token, logger: logger)
    }
}
