import Foundation
import Hummingbird
import ServiceKitHTTP

/// The paging parameters the registration admin lists share: `limit` (1 to `maxLimit`, 50 when
/// absent), `after` (the id the previous page's `next` gave) and `q` (a search, at most 100
/// characters). A wrong one is refused (400) by name.
struct AdminPage {
    var limit = 50
    var after: UUID?
    var search: String?

    init(_ parameters: Parameters, maxLimit: Int, afterName: String) throws {
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw APIError.badRequest("limit must be 1 to \(maxLimit)", field: "limit")
            }
            limit = value
        }
        if let text = parameters["after"] {
            guard let value = UUID(uuidString: String(text)) else {
                throw APIError.badRequest("after must be \(afterName), as the previous page's next gave it", field: "after")
            }
            after = value
        }
        search = parameters["q"].map { $0.trimmingCharacters(in: .whitespaces) }
        if search?.isEmpty ?? false { search = nil }
        if let search, search.count > 100 { throw APIError.badRequest("q is at most 100 characters", field: "q") }
    }
}
