import Foundation
import JSONText

/// The lines of a file of JSON lines, read a block at a time so a file of any size is never held
/// whole; a line longer than `maxLineBytes` ends the reading with an error rather than growing.
public struct JSONLines: Sequence {
    public struct LineTooLong: Error, CustomStringConvertible {
        public let line: Int
        public var description: String { "line \(line) is longer than \(JSONLines.maxLineBytes) bytes" }
    }

    public static let maxLineBytes = 32 * 1024 * 1024

    let handle: FileHandle

    public init(path: String) throws {
        handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    }

    public func makeIterator() -> Iterator { Iterator(handle: handle) }

    public struct Iterator: IteratorProtocol {
        let handle: FileHandle
        var buffer: [UInt8] = []
        var start = 0
        var ended = false
        /// The lines read so far (the last one read, counting from 1).
        public private(set) var number = 0
        /// Set when a line was too long; the sequence then ends.
        public private(set) var failure: LineTooLong?

        init(handle: FileHandle) {
            self.handle = handle
        }

        /// The next non-empty line's bytes.
        public mutating func next() -> [UInt8]? {
            while failure == nil {
                if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(buffer[start..<newline])
                    start = newline + 1
                    number += 1
                    if line.isEmpty { continue }
                    return line
                }
                if buffer.count - start > JSONLines.maxLineBytes {
                    failure = LineTooLong(line: number + 1)
                    return nil
                }
                if ended {
                    guard start < buffer.count else { return nil }
                    let line = Array(buffer[start...])
                    start = buffer.count
                    number += 1
                    return line
                }
                buffer.removeFirst(start)
                start = 0
                let block = (try? handle.read(upToCount: 1 << 20)) ?? nil
                if let block, !block.isEmpty { buffer.append(contentsOf: block) } else { ended = true }
            }
            return nil
        }
    }
}

/// A file of JSON lines holding personal data: created readable by its owner only before a byte is
/// written, one value a line.
public struct JSONLinesWriter {
    public struct CannotCreate: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "cannot create \(path)" }
    }

    let handle: FileHandle

    public init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else { throw CannotCreate(path: path) }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    /// A value the JSON writer writes as it is, members in their order.
    public func write(json value: JSONValue) throws {
        try handle.write(contentsOf: Data((value.serialized() + "\n").utf8))
    }

    public func close() throws { try handle.close() }
}
