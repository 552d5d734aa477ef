import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// A study's schema app side for its admins (docs/schema-protocols.md):
/// - `PUT /admin/v1/studies/{studyId}/imports/schema`: a schema app protocol as the body makes the
///   draft's activities, schedules, arms and graphs. A new study is created from it in the app
///   `?appId=` names (its schedules computed in `?timeZone=`, UTC by default);
///   `?assignment=block|simple` chooses how participants are given arms.
/// - `GET /admin/v1/studies/{studyId}/schema`: where the app downloads the protocol (what the
///   study's QR code says) and posts its data, and whether it is served now.
package struct SchemaAdminRoutes {
    package typealias Imported = SchemaImportResult

    package let studies: StudyStore
    package let apps: AppStore
    package let published: PublishedStudies
    package let authenticator: AdminTokenAuthenticator
    /// study-metadata's and the response service's addresses as phones reach them.
    package let protocolBase: URL
    package let dataBase: URL

    package init(
        studies: StudyStore, apps: AppStore, published: PublishedStudies, authenticator: AdminTokenAuthenticator,
        protocolBase: URL, dataBase: URL
    ) {
        self.studies = studies
        self.apps = apps
        self.published = published
        self.authenticator = authenticator
        self.protocolBase = protocolBase
        self.dataBase = dataBase
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.put("/admin/v1/studies/:studyId/imports/schema", use: importProtocol)
        router.get("/admin/v1/studies/:studyId/schema", use: info)
    }

    @Sendable package func info(_ request: Request, context: ServiceRequestContext) async throws -> SchemaStudyInfo {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        guard let draft = try await studies.draft(studyId: studyId) else { throw APIError.notFound("no study \(studyId)") }
        let document = try JSONDecoder().decode(StudyDocument.self, from: Data(draft.json.utf8))
        guard let source = document.source, source.format == .schema else {
            throw APIError.notFound("study \(studyId) was not imported from a schema protocol")
        }
        guard case .array(let modules)? = source.document["modules"] else {
            throw APIError.notFound("study \(studyId) was not imported from a schema protocol")
        }
        return SchemaStudyInfo(
            studyId: studyId, protocolURL: SchemaProtocolRoutes.protocolURL(base: protocolBase, studyId: studyId),
            postURL: SchemaProtocolRoutes.postURL(base: dataBase, studyId: studyId),
            served: try await published.servedSchemaProtocol(studyId: studyId) != nil,
            protocolStudyId: source.document["properties"]?["study_id"]?.text, arms: document.arms,
            activities: SchemaImport.activityIds(modules: modules))
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

extension SchemaImportResult: ResponseEncodable {}
extension SchemaStudyInfo: ResponseEncodable {}
