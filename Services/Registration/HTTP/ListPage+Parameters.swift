import Foundation
import Hummingbird
import RegistrationCore
import ServiceKitHTTP

extension ListPage {
    /// The paging parameters the registration admin lists share: `limit` (1 to `maxLimit`, 50 when
    /// absent), `after` (the id the previous page's `next` gave) and `q` (a search, at most 100
    /// characters). A wrong one is refused (400) by name.
    init(_ parameters: Parameters, maxLimit: Int, afterName: String) throws {
        self.init(limit: 50)
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
        // Counted as sent, in code points as JSON Schema's maxLength counts them: a character
        // built of combining marks is many code points, and surrounding spaces count too.
        if let raw = parameters["q"], raw.unicodeScalars.count > 100 {
            throw APIError.badRequest("q is at most 100 characters", field: "q")
        }
        search = parameters["q"].map { $0.trimmingCharacters(in: .whitespaces) }
        if search?.isEmpty ?? false { search = nil }
    }
}
