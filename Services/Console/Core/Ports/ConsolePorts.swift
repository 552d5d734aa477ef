import Foundation
import JSONText
import Logging
import StudyModels

// What the console's use cases need of the admin APIs, each as small as the use cases ask it.
// `AdminAPIClient` conforms (real HTTP to the three services, with the admin's own token); the
// tests' fake admin API (`Tests/InMemoryPorts`) stands in for it where a use case is tested alone.

/// A study's summary and its draft, read and saved.
package protocol StudyDrafts: Sendable {
    func study(_ studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudySummary
    func apps(token: String, logger: Logger) async throws(AdminAPIError) -> [AppDefinition]
    /// The draft and its revision (`ETag`); `summary` lets a draft read before at its revision be reused.
    func draft(_ studyId: String, summary: StudySummary?, token: String, logger: Logger) async throws(AdminAPIError)
        -> (document: JSONValue, revision: String)
    func saveDraft(
        _ studyId: String, document: JSONValue, precondition: AdminAPIClient.DraftPrecondition, token: String, logger: Logger
    ) async throws(AdminAPIError) -> DraftSaved
}

/// One participant as the three services know them: registration's record and runs, the
/// response service's number, responses and archives.
package protocol ParticipantRecords: Sendable {
    func participant(_ participantId: String, of studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> ParticipantDetail
    func participantNumbers(of studyId: String, hashes: [String], token: String, logger: Logger) async throws(AdminAPIError)
        -> [String: Int64]
    func participantRuns(_ participantId: String, of studyId: String, from: Date, to: Date, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunsReply
    func participantRunWeeks(_ participantId: String, of studyId: String, weeks: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunWeeks
    func responses(of studyId: String, query: [(String, String)], token: String, logger: Logger) async throws(AdminAPIError)
        -> [ResponseSummary]
    func sageArchives(of studyId: String, participant: Int64, limit: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageArchiveList
}

extension AdminAPIClient: StudyDrafts, ParticipantRecords {}

/// The text of a PDF, as a program that reads PDFs lays it out: pages in order, a blank line
/// between paragraphs, a form feed between pages.
package protocol PDFTextReading: Sendable {
    func text(ofPDF bytes: [UInt8]) async throws(PDFTextFailure) -> String
}

/// Why a PDF's text could not be read, in words for the page.
package struct PDFTextFailure: Error, Equatable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
