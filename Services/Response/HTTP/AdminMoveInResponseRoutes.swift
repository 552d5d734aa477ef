import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import JSONText
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /admin/v1/studies/{studyId}/move-in/responses?dryRun=` (super-admin): one part of the
/// responses `studystack-import responses read` read from a MyStudies 2.x deployment's Firestore
/// becomes the study's responses (docs/moving-in.md). A dry run (the default) stores nothing.
package struct AdminMoveInResponseRoutes: Sendable {
    /// The most values one part builds (a thousand responses of a few hundred answers each).
    package static let maxPartValues = 4_000_000

    package let catalog: StudyCatalog
    package let moveIns: ResponseMoveIns

    package init(catalog: StudyCatalog, moveIns: ResponseMoveIns) {
        self.catalog = catalog
        self.moveIns = moveIns
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.moveInResponses, use: moveIn)
    }

    @Sendable package func moveIn(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> ResponseMoveInReport {
        let studyId = try context.parameters.decoded("studyId")
        guard let study = try await catalog.study(studyId) else { throw ResponseAdminError.noStudy(studyId) }
        let dryRun = try request.dryRun()
        let part = try await Self.part(from: request, context: context)
        guard part.responses.count <= MovedResponsesPart.maxResponses else {
            throw APIError.badRequest("one request moves at most \(MovedResponsesPart.maxResponses) responses in; send them in parts")
        }
        return try await moveIns.run(part, study: study, dryRun: dryRun, actor: admin.email)
    }

    /// The part, read by the JSON parser within the body's limit and the part's budget (not
    /// through `Codable`: see `MovedResponsesPart.init(json:)`); a part that is not one is a 422
    /// naming where.
    static func part(from request: Request, context: ServiceRequestContext) async throws -> MovedResponsesPart {
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let budget = JSONValue.Budget(maxBytes: context.maxUploadSize, maxNodes: maxPartValues, maxDepth: 64)
        do {
            return try MovedResponsesPart(json: try JSONValue.parse(body.readableBytesView, budget: budget))
        } catch let error as JSONValue.ParseError {
            throw APIError.invalid("the part could not be read", problems: [ValidationProblem(pointer: "", message: "part is \(error.description)")])
        } catch let problem as MovedResponsesPart.Problem {
            throw APIError.invalid("the part could not be read", problems: [ValidationProblem(pointer: problem.pointer, message: problem.message)])
        }
    }
}

extension ResponseMoveInReport: ResponseEncodable {}
