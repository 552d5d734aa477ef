import Foundation
import Hummingbird
import InternalContracts
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// The signed `/internal/v1` endpoints other services read studies from: the list of published
/// studies (a resync), activity designs by version, and frozen documents (the response service),
/// and a study's standing and schedule (registration). Only other StudyStack services reach them
/// (`InternalAuthMiddleware` guards the group), and each route only the caller it serves.
package struct InternalStudyRoutes {
    package let published: PublishedStudies

    package init(published: PublishedStudies) {
        self.published = published
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.studies, use: studies)
        group.on(InternalCalls.activity, use: activity)
        group.on(InternalCalls.document, use: document)
        group.on(InternalCalls.versions, use: versions)
        group.on(InternalCalls.standing, use: standing)
        group.on(InternalCalls.schedule, use: schedule)
    }

    /// What the study schedules at its newest published version, for registration's runs. A study
    /// in testing counts (its testers have runs too); one never published does not exist. The
    /// activities are sent without their steps: registration reads when runs open and close, never
    /// what they ask, and the steps were most of the bytes written and read on every
    /// participant's runs page.
    @Sendable package func schedule(_ call: InternalRequest<NoContent>) async throws -> StudySchedule {
        let studyId = try call.parameter("studyId")
        guard let standing = try await published.standing(studyId: studyId),
            let current = try await published.current(appId: standing.appId, testing: true, studyId: studyId).first
        else { throw StudyMetadataError.noPublishedStudy(studyId) }
        return StudySchedule(
            studyId: studyId, version: current.version, timeZone: current.document.timeZone, launchedAt: current.launchedAt,
            activities: current.document.activities.filter { $0.assessment?.isSageOnly != true }.map { activity in
                var scheduled = activity
                scheduled.steps = []
                return scheduled
            })
    }

    /// Registration checks a study id a participant sends (a consent upload) against this.
    @Sendable package func standing(_ call: InternalRequest<NoContent>) async throws -> StudyStanding {
        let studyId = try call.parameter("studyId")
        guard let standing = try await published.standing(studyId: studyId) else {
            throw StudyMetadataError.noPublishedStudy(studyId)
        }
        return standing
    }

    @Sendable package func studies(_ call: InternalRequest<NoContent>) async throws -> StudyEventList {
        return StudyEventList(studies: try await published.studyEvents())
    }

    /// The design of one activity version, as the apps read it from `/StudyMetaData/activity`, with
    /// every step (no platform filter) and English texts. The version is its label (the admin's, or
    /// numbered like `1.2`) or its number;
    /// the activity id is matched as written, or else in any case (the design carries its own).
    @Sendable package func activity(_ call: InternalRequest<NoContent>) async throws -> ActivityReply {
        let studyId = try call.parameter("studyId")
        let activityId = try call.parameter("activityId")
        let label = try call.parameter("version")
        guard StudyActivity.isValidVersionLabel(label) else {
            throw APIError.badRequest("the version must be a label like 1.2 or 3: letters, digits, dots, hyphens or underscores")
        }
        let missing = StudyMetadataError.noActivityVersion(studyId: studyId, activityId: activityId, label: label)
        guard let (version, activityVersion) = try await published.version(studyId: studyId, activityId: activityId, label: label)
        else { throw missing }
        let document = try await published.document(studyId: studyId, version: version)
        guard
            let activity = document.activities.first(where: { $0.activityId == activityId })
                ?? document.activities.first(where: { $0.activityId.lowercased() == activityId.lowercased() })
        else { throw missing }
        return ActivityReply(
            activity: ActivityDesign(activity, in: document, activityVersion: activityVersion)
                .served(language: nil),
            assessment: activity.assessment?.document)
    }

    /// The response service's FHIR API reads a study's versions and activity versions from this.
    @Sendable package func versions(_ call: InternalRequest<NoContent>) async throws -> StudyVersionHistory {
        let studyId = try call.parameter("studyId")
        guard let history = try await published.versionHistory(studyId: studyId) else { throw StudyMetadataError.noPublishedStudy(studyId) }
        return history
    }

    @Sendable package func document(_ call: InternalRequest<NoContent>) async throws -> StudyDocument {
        let studyId = try call.parameter("studyId")
        guard let version = Int(try call.parameter("version")), version >= 1 else {
            throw APIError.badRequest("the version must be a whole number from 1")
        }
        return try await published.document(studyId: studyId, version: version)
    }
}

