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

/// One participant as the two services that hold them know them, one call to each: registration's
/// record, runs and weekly report; the response service's number, responses and archives.
package protocol ParticipantRecords: Sendable {
    /// Registration's record of them, their runs from `from` (or their enrolment, when later) to
    /// `to` and their latest `weeks` weeks.
    func participantRecord(
        _ participant: RegistrationParticipantKey, of studyId: String, from: Date, to: Date, weeks: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantRecordReply
    /// Their number, link hash, latest `responses` responses and `archives` Sage archives.
    func participantData(
        _ participant: DataParticipantKey, of studyId: String, responses: Int, archives: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantDataReply
}

/// How registration is asked for one participant: by its id, or by the hash of the participant
/// id their app holds.
package enum RegistrationParticipantKey: Sendable, Equatable {
    case participantId(String)
    case appTokenSHA256(String)

    package var query: (String, String) {
        switch self {
        case .participantId(let id): ("participantId", id)
        case .appTokenSHA256(let hash): ("appTokenSHA256", hash)
        }
    }
}

/// How the response service is asked for one participant's data: by their number, or by the
/// hash of the participant id their app holds.
package enum DataParticipantKey: Sendable, Equatable {
    case number(Int64)
    case appTokenSHA256(String)

    package var query: (String, String) {
        switch self {
        case .number(let number): ("participant", String(number))
        case .appTokenSHA256(let hash): ("appTokenSHA256", hash)
        }
    }
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
