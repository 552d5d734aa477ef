import Foundation
import ServiceKit

/// One page of a study table as a researcher's data grid asks for it: sorted by any column either
/// way, filtered by participant, by the day rows were stored, and (for a child table) by the
/// parent row, and paged by a cursor that continues from the last row shown (keyset paging, so a
/// later page costs what the first does however deep it is).
///
/// Built from query parameters (`docs/response-api.md`, Response data grids); every mistake is
/// a `Problem` naming the parameter, and nothing is asked of the database until the query is whole.
package struct TableGridQuery: Sendable, Equatable {
    package enum Order: String, Sendable {
        case asc, desc
    }

    /// Where the previous page ended: the sort column's value there (as PostgreSQL prints it;
    /// nil for a missing answer) and the row's key, which breaks ties.
    package struct Cursor: Sendable, Equatable {
        package var column: String
        package var order: Order
        package var value: String?
        package var key: Int64

        package init(column: String, order: Order, value: String?, key: Int64) {
            self.column = column
            self.order = order
            self.value = value
            self.key = key
        }

        /// base64url of a JSON array, opaque to the caller.
        package var encoded: String {
            let parts: [String?] = [column, order.rawValue, value, String(key)]
            let data = (try? JSONEncoder().encode(parts)) ?? Data()
            return Base64URL.encode(data)
        }

        package static func decode(_ text: String) -> Cursor? {
            guard text.utf8.count <= 4096 else { return nil }
            guard let data = Base64URL.decode(text),
                let parts = try? JSONDecoder().decode([String?].self, from: Data(data)), parts.count == 4,
                let column = parts[0], let order = parts[1].flatMap(Order.init(rawValue:)),
                let key = parts[3].flatMap({ Int64($0) })
            else { return nil }
            return Cursor(column: column, order: order, value: parts[2], key: key)
        }
    }

    package struct Problem: Error, Equatable {
        package var field: String
        package var message: String
    }

    /// Text sorts by its first 200 characters, so a cursor stays small however long the answers.
    package static let textSortLength = 200
    package static let defaultLimit = 50
    package static let maximumLimit = 500

    /// The column sorted by, as the catalog names it.
    package var sort: String
    package var order: Order
    package var participant: Int64?
    /// Rows stored at or after this instant.
    package var from: Date?
    /// Rows stored before this instant.
    package var until: Date?
    /// Only a child table's rows under this parent row.
    package var parentKey: Int64?
    package var limit: Int
    package var after: Cursor?

    /// Reads the grid parameters against `table`: `sort` (a column name, any case; `Key` by
    /// default), `order` (`asc` or `desc`), `participant`, `from` and `to` (`yyyy-MM-dd` as whole
    /// UTC days, `to` included, or ISO 8601 instants), `parent`, `limit` (1 to 500) and `after`.
    package static func parse(
        _ parameters: [String: String], table: QueryTranslator.Catalog.Table
    ) throws(Problem) -> TableGridQuery {
        let sortName = parameters["sort"] ?? "Key"
        guard let sortColumn = table.column(sortName) else {
            throw Problem(field: "sort", message: "sort must name a column of \(table.name); it has no column \(sortName)")
        }
        guard let order = Order(rawValue: (parameters["order"] ?? "asc").lowercased()) else {
            throw Problem(field: "order", message: "order must be asc or desc")
        }
        var query = TableGridQuery(sort: sortColumn.name, order: order, limit: defaultLimit)
        if let text = parameters["participant"], !text.isEmpty {
            guard let id = Int64(text), id > 0 else {
                throw Problem(field: "participant", message: "participant must be a participant number (the ParticipantId column)")
            }
            query.participant = id
        }
        if let text = parameters["from"], !text.isEmpty {
            guard let day = instant(text, endOfDay: false) else {
                throw Problem(field: "from", message: "from must be a date (yyyy-MM-dd) or an ISO 8601 time with an offset")
            }
            query.from = day
        }
        if let text = parameters["to"], !text.isEmpty {
            guard let day = instant(text, endOfDay: true) else {
                throw Problem(field: "to", message: "to must be a date (yyyy-MM-dd) or an ISO 8601 time with an offset")
            }
            query.until = day
        }
        if let from = query.from, let until = query.until, from >= until {
            throw Problem(field: "to", message: "to must come after from")
        }
        if let text = parameters["parent"], !text.isEmpty {
            guard table.parent != nil else {
                throw Problem(field: "parent", message: "parent applies only to a child table; \(table.name) has no parent rows")
            }
            guard let key = Int64(text), key > 0 else {
                throw Problem(field: "parent", message: "parent must be the Key of a row of \(table.parent ?? "")")
            }
            query.parentKey = key
        }
        if let text = parameters["limit"] {
            guard let limit = Int(text), (1...maximumLimit).contains(limit) else {
                throw Problem(field: "limit", message: "limit must be 1 to \(maximumLimit)")
            }
            query.limit = limit
        }
        if let text = parameters["after"], !text.isEmpty {
            guard let cursor = Cursor.decode(text), cursor.column == query.sort, cursor.order == order,
                cursor.value.map({ valueFits($0, storage: sortColumn.storage) }) ?? true
            else {
                throw Problem(field: "after", message: "after must be the next cursor of a page sorted the same way")
            }
            query.after = cursor
        }
        return query
    }

    /// Whether a cursor's value can be read back as the column's type, so a tampered cursor is a
    /// clear 400 rather than a database error.
    static func valueFits(_ value: String, storage: String) -> Bool {
        switch storage {
        case "INTEGER": Int64(value) != nil
        case "DOUBLE": Double(value) != nil || ["NaN", "Infinity", "-Infinity"].contains(value)
        case "BOOLEAN": value == "true" || value == "false"
        case "TIMESTAMP": value.utf8.count <= 40 && value.allSatisfy { $0.isNumber || " -:.+T".contains($0) }
        default: value.count <= textSortLength
        }
    }

    /// A whole UTC day (its start, or the start of the next one for an end) or an exact instant.
    static func instant(_ text: String, endOfDay: Bool) -> Date? {
        if text.count == 10 {
            let day = Date.ISO8601FormatStyle(timeZone: TimeZone.gmt).year().month().day()
                .dateSeparator(.dash)
            guard let start = try? day.parse(text) else { return nil }
            return endOfDay ? start.addingTimeInterval(86_400) : start
        }
        if let exact = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return exact }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
