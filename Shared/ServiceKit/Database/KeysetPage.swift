/// One page of a list read in key order (keyset paging): the store reads `fetchLimit(limit)`
/// rows, one more than the page holds, and that extra row only says another page follows. The
/// cursor to it is the key of the page's last item, which the next request sends back as its
/// `after` (or `before`). Every paged admin list (participants, accounts, invitations, archives,
/// schema participants) is cut this way.
public struct KeysetPage<Item, Cursor> {
    public var items: [Item]
    /// Where the next page starts after; nil on the last page.
    public var next: Cursor?

    /// The page of `limit` items from the `found` rows, which the store read with
    /// `fetchLimit(limit)`.
    public init(_ found: [Item], limit: Int, key: (Item) -> Cursor) {
        let size = max(0, limit)
        items = Array(found.prefix(size))
        next = found.count > size ? items.last.map(key) : nil
    }

    /// How many rows to read for a page of `limit`: one more, without overflowing.
    public static func fetchLimit(_ limit: Int) -> Int {
        max(0, limit).addingReportingOverflow(1).overflow ? Int.max : max(0, limit) + 1
    }
}
