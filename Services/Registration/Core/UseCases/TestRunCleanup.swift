import Foundation
import Logging
import StudyModels

/// Forgets what the registration service recorded for a study during its test run, when
/// study-metadata says the run ended: the testers' study and activity states, their consents (and
/// the signed PDFs), and the invitations that brought them. Only rows written up to the moment
/// testing ended go, so a late or repeated delivery leaves the real participants who joined
/// since untouched.
package struct TestRunCleanup: Sendable {
    package let records: any TestRunRecords
    package let consents: any ConsentStorage
    package let logger: Logger

    package init(records: any TestRunRecords, consents: any ConsentStorage, logger: Logger) {
        self.records = records
        self.consents = consents
        self.logger = logger
    }

    package func testingEnded(_ ended: StudyTestingEnded) async throws -> TestRunRemoval {
        let (removed, pdfKeys) = try await records.removeRecords(studyId: ended.studyId, upTo: ended.endedAt)
        // The records that named them are gone; a file left by a failure here is unreachable.
        for key in pdfKeys {
            do { try await consents.remove(key) } catch {
                logger.warning("a tester's consent PDF could not be removed", metadata: ["error": "\(error)"])
            }
        }
        return removed
    }
}
