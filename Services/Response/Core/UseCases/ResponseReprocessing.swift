import Foundation
import StudyModels

/// Puts a study's failed responses back in the processing queue (admin API, console): against
/// the activity version each was sent for, or against a later published version once the team
/// has mended the study (docs/response-api.md, Reprocessing). A response whose answers its own
/// design cannot hold (a date question published without its kind, say) can never be stored
/// against that design; against the mended version its answers are matched to the questions by
/// their keys, as every response is. The version it was sent for is kept as received.
package struct ResponseReprocessing: Sendable {
    package let responses: any FailedResponses
    package let designs: any ActivityDesigns

    package init(responses: any FailedResponses, designs: any ActivityDesigns) {
        self.responses = responses
        self.designs = designs
    }

    /// Puts the study's `error` responses among `ids` back in the queue, to be processed against
    /// `againstVersion` of their activity when it is given (nil: the version each was sent for).
    /// The chosen version's design is read and applied first, for every activity the responses
    /// are of, so a version that does not exist or cannot hold answers is refused here with
    /// nothing changed, never found later response by response: `versionCannotBeProcessed` (the
    /// reason in the words the processing errors use), or `designUnavailable` when study-metadata
    /// cannot be asked now.
    package func reprocess(
        _ ids: [Int64], study: StudyCatalog.Study, actor: String, againstVersion: String?
    ) async throws -> ReprocessOutcome {
        if let againstVersion {
            for activityId in try await responses.failedActivities(ids, studyKey: study.key) {
                do {
                    try await designs.ensureApplied(
                        studyKey: study.key, studyId: study.studyId, activityId: activityId, version: againstVersion)
                } catch let error as DesignSource.Unavailable {
                    throw ResponseAdminError.designUnavailable(error.description)
                } catch let error as SurveySchema.DesignError {
                    throw ResponseAdminError.versionCannotBeProcessed(
                        activityId: activityId, version: againstVersion, reason: error.description)
                }
            }
        }
        return try await responses.reprocess(ids, studyKey: study.key, actor: actor, againstVersion: againstVersion)
    }
}
