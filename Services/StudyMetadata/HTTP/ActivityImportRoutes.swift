import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `PUT /admin/v1/studies/{studyId}/draft/activities/{activityId}`: one activity in exactly the
/// JSON the apps read from `/StudyMetaData/activity` (the whole reply or its `activity` object),
/// so designs from the original servers import unchanged.
///
/// The activity id comes from the path. The title is `metadata.name` (or the replaced activity's
/// title); the schedule is the replaced activity's, or for a new activity "one time, from launch,
/// for the study's lifetime" until the draft says otherwise.
package struct ActivityImportRoutes {
    package struct Saved: ResponseEncodable {
        package var studyId: String
        package var activityId: String
        package var created: Bool
        package var activity: StudyActivity
        /// Incomplete content that does not block saving or publishing, located in the body.
        package var warnings: [ValidationProblem]
    }

    package let editing: DraftEditing

    package init(editing: DraftEditing) {
        self.editing = editing
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.importActivity, use: save)
    }

    @Sendable package func save(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<Saved> {
        let studyId = try context.parameters.decoded("studyId")
        let activityId = try context.parameters.decoded("activityId")
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let design: ActivityDesign
        do {
            design = try ActivityImport.parse(Data(buffer: buffer))
        } catch {
            throw APIError.invalid(
                "the activity could not be read", problems: [ValidationProblem(pointer: error.pointer, message: error.message)])
        }
        if !Identifiers.isValid(activityId) {
            throw StudyMetadataError.invalid(
                [ValidationProblem(pointer: "", message: "the activity id in the path: \(Identifiers.rule)")], subject: .activity)
        }
        // `?version=`: the label this design had where it comes from, which its responses carry.
        let label = request.uri.queryParameters.get("version")
        if let label, !StudyActivity.isValidVersionLabel(label) {
            throw APIError.invalid(
                "the version label is not valid",
                problems: [ValidationProblem(pointer: "", message: "the version in the query: 1 to 32 letters, digits, dots, hyphens or underscores")])
        }
        let saved = try await editing.saveActivity(studyId: studyId, activityId: activityId, by: admin) { existing in
            Self.activity(from: design, id: activityId, replacing: existing, versionLabel: label)
        }
        return EditedResponse(
            status: saved.created ? .created : .ok,
            response: Saved(
                studyId: studyId, activityId: activityId, created: saved.created, activity: saved.activity,
                warnings: saved.warnings))
    }

    /// The draft's activity from an imported design: the schedule and version label of the
    /// activity it replaces are kept unless a label is given.
    package static func activity(
        from design: ActivityDesign, id: String, replacing existing: StudyActivity?, versionLabel: String? = nil
    ) -> StudyActivity {
        var schedule = Schedule(frequency: .oneTime)
        schedule.launchWithStudy = true
        schedule.studyLifetime = true
        let branches = design.allSteps.contains { step in (step.destinations ?? []).contains { !$0.condition.isEmpty } }
        var activity = StudyActivity(
            activityId: id, title: design.metadata.name ?? existing?.title ?? LocalizedText(id), type: design.kind,
            branching: branches, schedule: existing?.schedule ?? schedule, steps: design.steps,
            versionLabel: versionLabel ?? existing?.versionLabel)
        // A new activity's schedule is a placeholder until the team chooses one; a replaced
        // activity keeps its own, and whether it was still a placeholder.
        activity.placeholderSchedule = existing == nil ? true : existing?.placeholderSchedule
        return activity
    }
}

extension StudyActivity: ResponseEncodable {}
