import Foundation

/// Writes a zip archive as a stream, one file after another, without knowing sizes in advance
/// (each file's CRC-32 and size follow it in a data descriptor) and without holding a file in
/// memory. Files are stored, not compressed: the archive is a container for a study's CSV files,
/// which researchers open one by one. Each file and the archive must stay under 4 GiB (no Zip64);
/// the JSON-lines export has no such limit.
package struct ZipStreamWriter {
    package struct TooLarge: Error, CustomStringConvertible {
        package var description: String { "the export passed 4 GiB, the zip limit; use the JSON-lines export" }
    }

    private struct Entry {
        package var name: [UInt8]
        package var crc: UInt32
        package var size: UInt64
        package var offset: UInt64
    }

    private var entries: [Entry] = []
    private var current: Entry?
    private var offset: UInt64 = 0
    private let time: UInt16
    private let date: UInt16

    package init(modified: Date = Date()) {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone.gmt, from: modified)
        time = UInt16((parts.hour ?? 0) << 11 | (parts.minute ?? 0) << 5 | (parts.second ?? 0) / 2)
        date = UInt16(max(0, (parts.year ?? 1980) - 1980) << 9 | (parts.month ?? 1) << 5 | (parts.day ?? 1))
    }

    /// The local header of a new file (the previous one must be finished).
    package mutating func startFile(_ name: String) -> [UInt8] {
        precondition(current == nil, "finish the previous file first")
        let nameBytes = Array(name.utf8)
        current = Entry(name: nameBytes, crc: 0, size: 0, offset: offset)
        var header: [UInt8] = []
        header.append(le32: 0x0403_4b50)
        header.append(le16: 20)  // version needed: 2.0
        header.append(le16: 0x0808)  // sizes in a data descriptor; UTF-8 names
        header.append(le16: 0)  // stored
        header.append(le16: time)
        header.append(le16: date)
        header.append(le32: 0)
        header.append(le32: 0)
        header.append(le32: 0)
        header.append(le16: UInt16(nameBytes.count))
        header.append(le16: 0)
        header += nameBytes
        offset += UInt64(header.count)
        return header
    }

    /// Accounts for `bytes` of the current file, which the caller writes as they are.
    package mutating func account(_ bytes: some Sequence<UInt8>) throws(TooLarge) {
        guard var entry = current else { preconditionFailure("no file started") }
        var crc = ~entry.crc
        var count: UInt64 = 0
        for byte in bytes {
            crc = Self.table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8)
            count += 1
        }
        entry.crc = ~crc
        entry.size += count
        offset += count
        guard entry.size <= UInt64(UInt32.max), offset <= UInt64(UInt32.max) else { throw TooLarge() }
        current = entry
    }

    /// The current file's data descriptor.
    package mutating func finishFile() -> [UInt8] {
        guard let entry = current else { preconditionFailure("no file started") }
        var descriptor: [UInt8] = []
        descriptor.append(le32: 0x0807_4b50)
        descriptor.append(le32: entry.crc)
        descriptor.append(le32: UInt32(entry.size))
        descriptor.append(le32: UInt32(entry.size))
        offset += UInt64(descriptor.count)
        entries.append(entry)
        current = nil
        return descriptor
    }

    /// The central directory and its end record: the archive's last bytes.
    package mutating func finish() throws(TooLarge) -> [UInt8] {
        precondition(current == nil, "finish the last file first")
        var directory: [UInt8] = []
        for entry in entries {
            directory.append(le32: 0x0201_4b50)
            directory.append(le16: 20)
            directory.append(le16: 20)
            directory.append(le16: 0x0808)
            directory.append(le16: 0)
            directory.append(le16: time)
            directory.append(le16: date)
            directory.append(le32: entry.crc)
            directory.append(le32: UInt32(entry.size))
            directory.append(le32: UInt32(entry.size))
            directory.append(le16: UInt16(entry.name.count))
            directory.append(le16: 0)
            directory.append(le16: 0)
            directory.append(le16: 0)
            directory.append(le16: 0)
            directory.append(le32: 0)
            directory.append(le32: UInt32(entry.offset))
            directory += entry.name
        }
        guard entries.count < Int(UInt16.max), offset + UInt64(directory.count) <= UInt64(UInt32.max) else { throw TooLarge() }
        var end = directory
        end.append(le32: 0x0605_4b50)
        end.append(le16: 0)
        end.append(le16: 0)
        end.append(le16: UInt16(entries.count))
        end.append(le16: UInt16(entries.count))
        end.append(le32: UInt32(directory.count))
        end.append(le32: UInt32(offset))
        end.append(le16: 0)
        offset += UInt64(end.count)
        return end
    }

    /// CRC-32 (IEEE 802.3, reflected) by byte.
    package static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }
}

extension [UInt8] {
    fileprivate mutating func append(le16 value: UInt16) {
        append(UInt8(value & 0xff))
        append(UInt8(value >> 8))
    }

    fileprivate mutating func append(le32 value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xff)) }
    }
}
