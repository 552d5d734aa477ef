import CMariaDB
import Foundation
import JSONText

/// Where a MyStudies 2.x deployment's MySQL server is, and who reads it. A deployment on Google
/// Cloud is reached through the Cloud SQL Auth Proxy on the operator's machine (as its own
/// migration guide does), so the reader speaks to a loopback address or a socket.
public struct MariaDBAddress: Sendable {
    public var host: String
    public var port: Int
    public var socket: String?
    public var user: String
    public var password: String

    public init(host: String, port: Int, socket: String? = nil, user: String, password: String) {
        self.host = host
        self.port = port
        self.socket = socket
        self.user = user
        self.password = password
    }
}

public struct MariaDBError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// One connection through MariaDB Connector/C. Blocking: it is used from one thread of NIO's
/// blocking pool for the whole read (`MyStudiesDatabaseReader`), never shared.
///
/// Queries are `StaticString`s: nothing from outside is ever written into SQL. The database is
/// chosen with the client library's own call, and rows are filtered after reading.
final class MariaDBConnection {
    /// Longest value read whole; a longer one fails the read with a clear error rather than
    /// growing without bound (a signed consent PDF kept in the table is the largest expected).
    static let maximumValueBytes = 64 * 1024 * 1024

    private let handle: UnsafeMutablePointer<MYSQL>

    init(address: MariaDBAddress, database: String) throws {
        guard let handle = mysql_init(nil) else { throw MariaDBError(description: "the MariaDB client could not start") }
        self.handle = handle
        var timeout: UInt32 = 15
        mysql_options(handle, MYSQL_OPT_CONNECT_TIMEOUT, &timeout)
        var readTimeout: UInt32 = 600
        mysql_options(handle, MYSQL_OPT_READ_TIMEOUT, &readTimeout)
        var packet = UInt(Self.maximumValueBytes + 1024 * 1024)
        mysql_options(handle, MYSQL_OPT_MAX_ALLOWED_PACKET, &packet)
        mysql_options(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        let port = UInt32(clamping: max(0, address.port))
        guard mysql_real_connect(handle, address.host, address.user, address.password, database, port, address.socket, 0) != nil else {
            // The instance is whole, so its deinit closes the handle.
            let message = Self.lastError(handle)
            throw MariaDBError(description: "cannot connect to MySQL at \(address.socket ?? "\(address.host):\(address.port)") as \(address.user), database \(database): \(message)")
        }
    }

    deinit {
        mysql_close(handle)
    }

    /// The names of `table`'s columns, so a reader can tell which release's schema it reads.
    func columns(of table: StaticString) throws -> Set<String> {
        var names: Set<String> = []
        try forEachRow(rawQuery: "SHOW COLUMNS FROM \(table)") { row in
            if let name = row.text(0) { names.insert(name) }
        }
        return names
    }

    /// Runs `query` and hands each row to `body` as it arrives (rows are streamed, not buffered).
    func forEachRow(_ query: StaticString, _ body: (MariaDBRow) throws -> Void) throws {
        try forEachRow(rawQuery: query.description, body)
    }

    private func forEachRow(rawQuery query: String, _ body: (MariaDBRow) throws -> Void) throws {
        let status = query.withCString { mysql_real_query(handle, $0, UInt(strlen($0))) }
        guard status == 0 else { throw MariaDBError(description: "the query failed: \(Self.lastError(handle)) (\(query))") }
        guard let result = mysql_use_result(handle) else {
            throw MariaDBError(description: "the query returned no rows: \(Self.lastError(handle)) (\(query))")
        }
        defer { mysql_free_result(result) }
        let fieldCount = Int(mysql_num_fields(result))
        while let fields = mysql_fetch_row(result) {
            guard let lengths = mysql_fetch_lengths(result) else { break }
            var values: [[UInt8]?] = []
            values.reserveCapacity(fieldCount)
            for index in 0..<fieldCount {
                guard let pointer = fields[index] else {
                    values.append(nil)
                    continue
                }
                let length = Int(lengths[index])
                guard length <= Self.maximumValueBytes else {
                    throw MariaDBError(description: "a value of \(length) bytes is longer than the \(Self.maximumValueBytes) read whole (\(query))")
                }
                values.append(pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) })
            }
            try body(MariaDBRow(values: values))
        }
        if mysql_errno(handle) != 0 {
            throw MariaDBError(description: "reading rows failed: \(Self.lastError(handle)) (\(query))")
        }
    }

    private static func lastError(_ handle: UnsafeMutablePointer<MYSQL>) -> String {
        String(cString: mysql_error(handle))
    }
}

/// One row as the server sent it: each value's bytes, or nil for NULL.
struct MariaDBRow {
    let values: [[UInt8]?]

    /// The value as UTF-8 text (the connection reads utf8mb4); nil for NULL or a missing column.
    func text(_ index: Int) -> String? {
        guard values.indices.contains(index), let bytes = values[index] else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value as an identity, compared by its Unicode scalars.
    func key(_ index: Int) -> ScalarKey? {
        text(index).map { ScalarKey($0) }
    }

    func bytes(_ index: Int) -> [UInt8]? {
        guard values.indices.contains(index) else { return nil }
        return values[index]
    }

    /// A `bit(1)` or `tinyint(1)`: MySQL sends a bit as one raw byte, a tinyint as its digits.
    func flag(_ index: Int) -> Bool? {
        guard let bytes = bytes(index), let first = bytes.first else { return nil }
        if bytes.count == 1, first <= 1 { return first == 1 }
        return text(index).flatMap { Int($0) }.map { $0 != 0 }
    }

    /// A whole number within `Int`; nil for NULL or text that is not one.
    func integer(_ index: Int) -> Int? {
        text(index).flatMap { Int($0) }
    }
}
