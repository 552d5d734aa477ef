import Foundation

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
        var number = 0
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
