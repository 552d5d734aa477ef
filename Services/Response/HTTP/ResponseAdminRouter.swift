import AdminAuthHTTP
import Foundation
import ResponseCore
import ServiceKitHTTP

/// The response service's admin API: every endpoint is about one study, which the router finds
/// from the path once the admin's role on it was checked, and hands to the handler.
package typealias ResponseAdminRouter = AdminStudyRouter<RemoteAdminAuthenticator, StudyCatalog.Study>

extension ResponseAdminRouter {
    /// The admin API over `routes`, its studies found in `catalog` (known here from
    /// study-metadata's events); a study it does not know is 404.
    package init(_ routes: AdminRouter<RemoteAdminAuthenticator>, catalog: StudyCatalog) {
        self.init(routes) { studyId in
            guard let study = try await catalog.study(studyId) else { throw ResponseAdminError.noStudy(studyId) }
            return study
        }
    }
}
