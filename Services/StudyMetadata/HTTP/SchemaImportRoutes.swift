import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `PUT /admin/v1/studies/{studyId}/imports/schema`: a schema app protocol as the body makes the
/// draft's activities, schedules, arms and graphs (docs/schema-protocols.md, Import). A new study
/// is created from it in the app `?appId=` names (its schedules computed in `?timeZone=`, UTC by
/// default); `?assignment=block|simple` chooses how participants are given arms.
package struct SchemaImportRoutes {
    package struct Imported: ResponseEncodable {
        package var studyId: String
        package var created: Bool
        /// The activity each module became, in the protocol's order.
        package var activities: [String]
        package var arms: StudyArms?
        /// What works, but not as the protocol's author may think, located in the protocol; then
        /// what the draft still lacks, located in the draft.
        package var warnings: [ValidationProblem]
    }

    package let studies: StudyStore
    package let apps: AppStore
    package let authenticator: AdminTokenAuthenticator

    package init(studies: StudyStore, apps: AppStore, authenticator: AdminTokenAuthenticator) {
        self.studies = studies
        self.apps = apps
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.put("/admin/v1/studies/:studyId/imports/schema", use: importProtocol)
    }

    @Sendable package func importProtocol(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Imported> {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.authenticate(request)
        let exists = try await studies.exists(studyId: studyId)
        // An existing study needs an editor; anyone signed in may start a new one, as with drafts.
        if exists, !admin.may(.editor, on: studyId) { throw APIError.forbidden("this needs the editor role on study \(studyId)") }
        let query = request.uri.queryParameters
        let assignment: SchemaConditions.Method?
        if let text = query.get("assignment") {
            guard let method = SchemaConditions.Method(rawValue: text) else {
                throw APIError.invalid(
                    "the assignment is not valid",
                    problems: [ValidationProblem(pointer: "", message: "assignment in the query: block or simple")])
            }
            assignment = method
        } else {
            assignment = nil
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let reading = SchemaImport.read(body.readableBytesView, assignment: assignment ?? .block)
        guard reading.errors.isEmpty else { throw DocumentBody.rejected(reading.errors, in: "protocol") }
        let protocolWarnings = reading.warnings

        if exists {
            let outcome = try await studies.editDraft(
                studyId: studyId, by: admin, action: "study.schema_imported",
                details: ["protocolStudyId": reading.protocolStudyId ?? ""]
            ) { draft in
                // A re-import keeps the assignment chosen before unless the query names one.
                var imported = reading
                if assignment == nil, let previous = draft.arms?.assignment { imported.arms?.assignment = previous }
                imported.apply(to: &draft)
                return draft.arms
            }
            switch outcome {
            case .notFound: throw APIError.notFound("no study \(studyId)")
            case .closed: throw APIError.conflict("study \(studyId) is deactivated; its draft can no longer change")
            case .invalid(let problems, _): throw Self.unmapped(problems)
            case .saved(let warnings, let arms):
                return EditedResponse(
                    status: .ok,
                    response: Imported(
                        studyId: studyId, created: false, activities: reading.activities.map(\.activityId), arms: arms,
                        warnings: protocolWarnings + warnings))
            }
        }

        guard let appId = query.get("appId"), !appId.isEmpty else {
            throw APIError.invalid(
                "a new study needs its app",
                problems: [ValidationProblem(pointer: "", message: "appId in the query: the app the new study \(studyId) belongs to")])
        }
        guard try await apps.app(id: appId) != nil else {
            throw APIError.invalid(
                "there is no app \(appId)", problems: [ValidationProblem(pointer: "", message: "appId in the query: create the app first")])
        }
        let timeZone = query.get("timeZone") ?? "UTC"
        var document = StudyDocument(
            studyId: studyId, appId: appId, name: LocalizedText(reading.name ?? studyId), timeZone: timeZone)
        reading.apply(to: &document)
        var review = StudyValidator.review(document)
        if !Identifiers.isValid(studyId) {
            review.problems.insert(ValidationProblem(pointer: "", message: "the study id in the path: \(Identifiers.rule)"), at: 0)
        }
        if TimeZone(identifier: timeZone) == nil {
            review.problems.insert(
                ValidationProblem(pointer: "", message: "timeZone in the query: \"\(timeZone)\" is not an IANA time zone"), at: 0)
        }
        guard review.problems.isEmpty else { throw Self.unmapped(review.problems) }
        switch try await studies.saveDraft(document, by: admin, expecting: .absent) {
        case .created:
            return EditedResponse(
                status: .created,
                response: Imported(
                    studyId: studyId, created: true, activities: reading.activities.map(\.activityId), arms: document.arms,
                    warnings: protocolWarnings + review.warnings + review.unfinished))
        case .idTaken(let other):
            throw APIError.conflict("study id \(studyId) is taken: study \(other) exists, and study ids are unique whatever their case")
        case .preconditionFailed:
            throw APIError.conflict("study \(studyId) was created meanwhile; import again to replace its draft's content")
        case .updated, .closed, .appFixed, .eligibilityFixed:
            throw APIError.conflict("study \(studyId) changed meanwhile; import again")
        }
    }

    /// Problems the study model finds in what the protocol became, located in the study document.
    static func unmapped(_ problems: [ValidationProblem]) -> APIError {
        APIError.invalid(
            "the study made from the protocol has \(problems.count) problem\(problems.count == 1 ? "" : "s") (located in the study document)",
            problems: problems)
    }
}
