import AdminAuthHTTP
import AdminContracts
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

    package let imports: SchemaProtocolImports
    package let published: PublishedStudies
    /// study-metadata's and the response service's addresses as phones reach them.
    package let protocolBase: URL
    package let dataBase: URL

    package init(
        imports: SchemaProtocolImports, published: PublishedStudies,
        protocolBase: URL, dataBase: URL
    ) {
        self.imports = imports
        self.published = published
        self.protocolBase = protocolBase
        self.dataBase = dataBase
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.importSchema, use: importProtocol)
        routes.on(AdminCalls.schemaInfo, use: info)
    }

    @Sendable package func info(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> SchemaStudyInfo {
        let studyId = try context.parameters.decoded("studyId")
        guard let draft = try await imports.editing.studies.draft(studyId: studyId) else { throw StudyMetadataError.unknownStudy(studyId) }
        let document = try JSONDecoder().decode(StudyDocument.self, from: Data(draft.json.utf8))
        guard let source = document.source, source.format == .schema else {
            throw StudyMetadataError.notFromSchemaProtocol(studyId: studyId)
        }
        guard case .array(let modules)? = source.document["modules"] else {
            throw StudyMetadataError.notFromSchemaProtocol(studyId: studyId)
        }
        return SchemaStudyInfo(
            studyId: studyId, protocolURL: SchemaProtocolRoutes.protocolURL(base: protocolBase, studyId: studyId),
            postURL: SchemaProtocolRoutes.postURL(base: dataBase, studyId: studyId),
            served: try await published.servedSchemaProtocol(studyId: studyId) != nil,
            protocolStudyId: source.document["properties"]?["study_id"]?.text, arms: document.arms,
            activities: SchemaImport.activityIds(modules: modules))
    }

    @Sendable package func importProtocol(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<Imported> {
        let studyId = try context.parameters.decoded("studyId")
        let access = try await imports.editing.authorize(admin, studyId: studyId)
        let query = request.uri.queryParameters
        var assignment: SchemaConditions.Method?
        if let text = query.get("assignment") {
            guard let method = SchemaConditions.Method(rawValue: text) else {
                throw APIError.invalid(
                    "the assignment is not valid",
                    problems: [ValidationProblem(pointer: "", message: "assignment in the query: block or simple")])
            }
            assignment = method
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let imported = try await imports.importProtocol(
            body.readableBytesView, into: access, assignment: assignment,
            newStudy: .init(appId: query.get("appId"), timeZone: query.get("timeZone") ?? "UTC"))
        return EditedResponse(status: imported.created ? .created : .ok, response: imported)
    }
}

extension SchemaImportResult: ResponseEncodable {}
extension SchemaStudyInfo: ResponseEncodable {}
