import Foundation

/// The part of an admin list asked for, which every registration list takes the same way: up to
/// `limit` items after the item `after` (the previous page's `next`), those matching `search`.
/// The HTTP routes read and check it from the query (`ListPage(_:maxLimit:afterName:)`); the
/// directories cut their rows with `KeysetPage`.
package struct ListPage: Sendable {
    package var limit: Int
    package var after: UUID?
    package var search: String?

    package init(limit: Int, after: UUID? = nil, search: String? = nil) {
        self.limit = limit
        self.after = after
        self.search = search
    }

    /// One item, for reading a single row through its list's query.
    package static let one = ListPage(limit: 1)
}
