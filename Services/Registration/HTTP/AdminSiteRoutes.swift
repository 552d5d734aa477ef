import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `/admin/v1/studies/{studyId}/sites`: a study's sites with their invitations and participants
/// counted (viewer), created, renamed, moved and decommissioned (study admin; audited).
package struct AdminSiteRoutes: Sendable {
    package let sites: SiteStore

    package init(sites: SiteStore) {
        self.sites = sites
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.sites, use: list)
        routes.on(AdminCalls.createSite, use: create)
        routes.on(AdminCalls.updateSite, use: update)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> SiteList {
        let studyId = try context.parameters.decoded("studyId")
        let counted: Bool
        switch request.uri.queryParameters["counts"].map(String.init) {
        case nil, "true": counted = true
        case "false": counted = false
        default: throw APIError.badRequest("counts is true or false", field: "counts")
        }
        return try await sites.sites(studyId: studyId, counted: counted)
    }

    @Sendable package func create(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> EditedResponse<Site> {
        let studyId = try context.parameters.decoded("studyId")
        let wanted = try await Self.site(request, creating: true)
        return EditedResponse(status: .created, response: try await sites.create(studyId: studyId, wanted, actor: admin.email))
    }

    @Sendable package func update(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> Site {
        let studyId = try context.parameters.decoded("studyId")
        guard let siteId = UUID(uuidString: try context.parameters.decoded("siteId")) else {
            throw RegistrationAdminError.noSite
        }
        let wanted = try await Self.site(request, creating: false)
        return try await sites.update(studyId: studyId, siteId: siteId, wanted, actor: admin.email)
    }

    /// The body, checked: a name of 1 to 100 characters, a location of at most 200, a positive
    /// target; `decommissioned` only when changing a site.
    static func site(_ request: Request, creating: Bool) async throws -> SiteRequest {
        let body = try await request.body.collect(upTo: 16 * 1024)
        guard var wanted = try? JSONDecoder().decode(SiteRequest.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be {\"name\", \"location\", \"targetEnrollment\"}")
        }
        guard let name = TextRules.singleLineField(wanted.name, maximum: 100) else {
            throw APIError.badRequest("name must be 1 to 100 characters on one line", field: "name")
        }
        wanted.name = name
        if let location = wanted.location {
            guard location.unicodeScalars.count <= 200 else {
                throw APIError.badRequest("location is at most 200 characters", field: "location")
            }
            let trimmed = location.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.isEmpty || TextRules.isSingleLine(trimmed) else {
                throw APIError.badRequest("location must be on one line", field: "location")
            }
            wanted.location = trimmed
        }
        if let target = wanted.targetEnrollment, !(1...1_000_000).contains(target) {
            throw APIError.badRequest("targetEnrollment must be 1 to 1,000,000", field: "targetEnrollment")
        }
        if creating, wanted.decommissioned != nil {
            throw APIError.badRequest("a new site is in use; decommission it with PUT", field: "decommissioned")
        }
        return wanted
    }
}

extension Site: ResponseEncodable {}
extension SiteList: ResponseEncodable {}
