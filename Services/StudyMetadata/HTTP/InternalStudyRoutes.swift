import Foundation
import Hummingbird
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
        group.get("/v1/studies", use: studies)
        group.get("/v1/studies/:studyId/activities/:activityId/versions/:version", use: activity)
        group.get("/v1/studies/:studyId/versions/:version/document", use: document)
        group.get("/v1/studies/:studyId/standing", use: standing)
        group.get("/v1/studies/:studyId/schedule", use: schedule)
    }

    /// What the study schedules at its newest published version, for registration's runs. A study
    /// in testing counts (its testers have runs too); one never published does not exist.
    @Sendable package func schedule(_ request: Request, context: ServiceRequestContext) async throws -> StudySchedule {
        try context.requireCaller(.registration, "computes participants' runs")
        let studyId = try context.parameters.decoded("studyId")
        guard let standing = try await published.standing(studyId: studyId),
            let current = try await published.current(appId: standing.appId, testing: true, studyId: studyId).first
        else { throw StudyMetadataError.noPublishedStudy(studyId) }
        return StudySchedule(
            studyId: studyId, version: current.version, timeZone: current.document.timeZone, launchedAt: current.launchedAt,
            activities: current.document.activities.filter { $0.assessment?.isSageOnly != true })
    }

    /// Registration checks a study id a participant sends (a consent upload) against this.
    @Sendable package func standing(_ request: Request, context: ServiceRequestContext) async throws -> StudyStanding {
        try context.requireCaller(.registration, "checks the studies participants name")
        let studyId = try context.parameters.decoded("studyId")
        guard let standing = try await published.standing(studyId: studyId) else {
            throw StudyMetadataError.noPublishedStudy(studyId)
        }
        return standing
    }

    @Sendable package func studies(_ request: Request, context: ServiceRequestContext) async throws -> StudyEventList {
        try context.requireCaller(.response, "resyncs studies")
        return StudyEventList(studies: try await published.studyEvents())
    }

    /// The design of one activity version, as the apps read it from `/StudyMetaData/activity`, with
    /// every step (no platform filter) and English texts. The version is its label (the admin's, or
    /// numbered like `1.2`) or its number;
    /// the activity id is matched as written, or else in any case (the design carries its own).
    @Sendable package func activity(_ request: Request, context: ServiceRequestContext) async throws -> ActivityReply {
        try context.requireCaller(.response, "reads activity designs")
        let studyId = try context.parameters.decoded("studyId")
        let activityId = try context.parameters.decoded("activityId")
        let label = try context.parameters.decoded("version")
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

    @Sendable package func document(_ request: Request, context: ServiceRequestContext) async throws -> StudyDocument {
        try context.requireCaller(.response, "reads study documents")
        let studyId = try context.parameters.decoded("studyId")
        guard let version = Int(try context.parameters.decoded("version")), version >= 1 else {
            throw APIError.badRequest("the version must be a whole number from 1")
        }
        return try await published.document(studyId: studyId, version: version)
    }
}

extension StudyEventList: ResponseEncodable {}
extension StudyStanding: ResponseEncodable {}
extension StudySchedule: ResponseEncodable {}
extension ActivityReply: ResponseEncodable {}
extension StudyDocument: ResponseEncodable {}
