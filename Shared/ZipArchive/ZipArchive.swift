import CLibDeflate

/// A ZIP archive read from memory, for archives that come from outside (a participant's phone
/// uploads Sage's result archives): every offset and length is checked against the bytes before
/// it is used, names are checked before anything is read, and inflating stops at the limits, so a
/// truncated, crafted or "zip bomb" archive is refused with a reason, never trusted.
///
/// Only what phones write is read: stored and deflated files, no ZIP64, no encryption, no
/// multi-disk archives. The central directory is the index (as every unzip reads it); each
/// entry's local header must agree with it.
public struct ZipArchive: Sendable {
    public struct Limits: Sendable {
        /// Files (directories not counted).
        public var maxFiles: Int
        /// Bytes of all files once inflated.
        public var maxTotalBytes: Int
        /// Bytes of one file once inflated.
        public var maxFileBytes: Int
        /// How many times larger than its compressed form a file may be (text compresses about
        /// ten times; a bomb, a thousand).
        public var maxRatio: Int

        public init(maxFiles: Int, maxTotalBytes: Int, maxFileBytes: Int, maxRatio: Int) {
            self.maxFiles = maxFiles
            self.maxTotalBytes = maxTotalBytes
            self.maxFileBytes = maxFileBytes
            self.maxRatio = maxRatio
        }
    }

    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// One file: its name as the archive gives it, and its bytes.
    public struct File: Sendable, Equatable {
        public var name: String
        public var bytes: [UInt8]
    }

    /// The files, in the order of the central directory.
    public let files: [File]

    public init(_ bytes: [UInt8], limits: Limits) throws(Failure) {
        let directory = try Self.centralDirectory(bytes)
        var entries: [Entry] = []
        var reader = ByteReader(bytes: bytes, at: directory.offset)
        for _ in 0..<directory.count {
            if let entry = try Self.entry(&reader, bytes: bytes) { entries.append(entry) }
            guard entries.count <= limits.maxFiles else { throw Failure("it holds more than \(limits.maxFiles) files") }
        }
        // Names by their bytes: a ZIP's names are bytes, and two that Swift's `String` takes for
        // one (canonically equivalent) are two files.
        var seen: Set<[UInt8]> = []
        var total = 0
        var files: [File] = []
        for entry in entries {
            guard seen.insert(Array(entry.name.utf8)).inserted else { throw Failure("it holds \(entry.name) twice") }
            guard entry.uncompressedSize <= limits.maxFileBytes else {
                throw Failure("\(entry.name) is larger than \(limits.maxFileBytes) bytes")
            }
            // (Small files may compress far: the ratio counts from 64 KB.)
            let (allowed, overflow) = max(entry.compressedSize, 1).multipliedReportingOverflow(by: max(limits.maxRatio, 1))
            guard entry.uncompressedSize <= 65_536 || overflow || entry.uncompressedSize <= allowed else {
                throw Failure("\(entry.name) would grow more than \(limits.maxRatio) times when unpacked")
            }
            total += entry.uncompressedSize
            guard total <= limits.maxTotalBytes else { throw Failure("its files come to more than \(limits.maxTotalBytes) bytes") }
            files.append(File(name: entry.name, bytes: try Self.contents(of: entry, in: bytes)))
        }
        self.files = files
    }

    /// The file of exactly that name (compared by bytes).
    public subscript(name: String) -> [UInt8]? { files.first { $0.name.utf8.elementsEqual(name.utf8) }?.bytes }

    // MARK: - The central directory

    private struct Entry {
        var name: String
        var method: UInt16
        var crc: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        var localHeader: Int
    }

    /// Finds the end-of-central-directory record (it may be followed by a comment of up to 64 KB).
    private static func centralDirectory(_ bytes: [UInt8]) throws(Failure) -> (offset: Int, count: Int) {
        guard bytes.count >= 22 else { throw Failure("it is not a ZIP archive (too short)") }
        var position = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 65_535)
        while position >= lowest {
            if bytes[position] == 0x50, bytes[position + 1] == 0x4B, bytes[position + 2] == 0x05, bytes[position + 3] == 0x06 {
                var reader = ByteReader(bytes: bytes, at: position + 4)
                let disk = try reader.uint16(), directoryDisk = try reader.uint16()
                let entriesHere = try reader.uint16(), entries = try reader.uint16()
                let size = try reader.uint32(), offset = try reader.uint32()
                let commentLength = try reader.uint16()
                guard position + 22 + Int(commentLength) == bytes.count else { position -= 1; continue }
                guard disk == 0, directoryDisk == 0, entriesHere == entries else { throw Failure("multi-part archives are not accepted") }
                guard entries != 0xFFFF, size != 0xFFFF_FFFF, offset != 0xFFFF_FFFF else { throw Failure("ZIP64 archives are not accepted") }
                guard Int(offset) + Int(size) <= position else { throw Failure("it is cut short or damaged (its directory lies outside it)") }
                return (Int(offset), Int(entries))
            }
            position -= 1
        }
        throw Failure("it is not a ZIP archive, or it is cut short (no end of central directory)")
    }

    /// One central directory record; nil for a directory.
    private static func entry(_ reader: inout ByteReader, bytes: [UInt8]) throws(Failure) -> Entry? {
        guard try reader.uint32() == 0x0201_4B50 else { throw Failure("it is damaged (a directory record is missing)") }
        _ = try reader.uint16()  // made by
        _ = try reader.uint16()  // needed to extract
        let flags = try reader.uint16()
        let method = try reader.uint16()
        _ = try reader.uint32()  // time and date
        let crc = try reader.uint32()
        let compressed = try reader.uint32(), uncompressed = try reader.uint32()
        let nameLength = Int(try reader.uint16()), extraLength = Int(try reader.uint16()), commentLength = Int(try reader.uint16())
        _ = try reader.uint16()  // disk
        _ = try reader.uint16()  // internal attributes
        let external = try reader.uint32()
        let localHeader = try reader.uint32()
        let nameBytes = try reader.bytes(nameLength)
        _ = try reader.bytes(extraLength + commentLength)
        guard flags & 0x1 == 0 else { throw Failure("encrypted entries are not accepted") }
        guard compressed != 0xFFFF_FFFF, uncompressed != 0xFFFF_FFFF, localHeader != 0xFFFF_FFFF else {
            throw Failure("ZIP64 archives are not accepted")
        }
        guard let name = String(validating: nameBytes, as: UTF8.self) else { throw Failure("an entry's name is not UTF-8") }
        // A symbolic link (Unix mode S_IFLNK in the upper half of the external attributes).
        guard (external >> 16) & 0xF000 != 0xA000 else { throw Failure("\(name) is a symbolic link") }
        try checkName(name)
        if name.unicodeScalars.last == "/" {
            guard uncompressed == 0 else { throw Failure("\(name) is a directory with contents") }
            return nil
        }
        guard method == 0 || method == 8 else { throw Failure("\(name) is compressed with method \(method); only stored and deflated files are read") }
        return Entry(name: name, method: method, crc: crc, compressedSize: Int(compressed), uncompressedSize: Int(uncompressed), localHeader: Int(localHeader))
    }

    /// A name that unpacks inside the folder it is unpacked into, whatever the unpacker.
    static func checkName(_ name: String) throws(Failure) {
        let scalars = name.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= 255 else { throw Failure("an entry's name is empty or longer than 255 characters") }
        guard scalars.first != "/", !scalars.contains("\\"), !scalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Failure("\(name): a name may not be absolute, hold a backslash or a control character")
        }
        if scalars.count >= 2, scalars.dropFirst().first == ":" { throw Failure("\(name): a name may not start with a drive letter") }
        let parts = scalars.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: { $0.elementsEqual("..".unicodeScalars) || $0.elementsEqual(".".unicodeScalars) }) else {
            throw Failure("\(name): a name may not hold . or .. as a part of its path")
        }
    }

    // MARK: - Contents

    private static func contents(of entry: Entry, in bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var reader = ByteReader(bytes: bytes, at: entry.localHeader)
        guard try reader.uint32() == 0x0403_4B50 else { throw Failure("\(entry.name): its local header is missing") }
        _ = try reader.bytes(22)
        let nameLength = Int(try reader.uint16()), extraLength = Int(try reader.uint16())
        guard try reader.bytes(nameLength).elementsEqual(entry.name.utf8) else { throw Failure("\(entry.name): its local header names another file") }
        _ = try reader.bytes(extraLength)
        let data = try reader.bytes(entry.compressedSize)
        let output: [UInt8]
        if entry.method == 0 {
            guard entry.compressedSize == entry.uncompressedSize else { throw Failure("\(entry.name): a stored file whose two sizes differ") }
            output = Array(data)
        } else {
            output = try inflate(data, expected: entry.uncompressedSize, name: entry.name)
        }
        let crc = output.withUnsafeBytes { UInt32(truncatingIfNeeded: libdeflate_crc32(0, $0.baseAddress, $0.count)) }
        guard crc == entry.crc else { throw Failure("\(entry.name): its checksum does not match (damaged)") }
        return output
    }

    /// Raw deflate into exactly `expected` bytes: the output has no room for more, so an entry
    /// that says it is small and inflates to more is refused as soon as it passes its size.
    private static func inflate(_ data: ArraySlice<UInt8>, expected: Int, name: String) throws(Failure) -> [UInt8] {
        guard let decompressor = libdeflate_alloc_decompressor() else { throw Failure("\(name): the inflater could not start") }
        defer { libdeflate_free_decompressor(decompressor) }
        var produced = 0
        var status = LIBDEFLATE_BAD_DATA
        let output = [UInt8](unsafeUninitializedCapacity: expected) { buffer, initialized in
            status = data.withUnsafeBytes { input in
                libdeflate_deflate_decompress(decompressor, input.baseAddress, input.count, buffer.baseAddress, expected, &produced)
            }
            // Only what was written counts; a file shorter than it says is refused below.
            initialized = status == LIBDEFLATE_SUCCESS ? min(produced, expected) : 0
        }
        switch status {
        case LIBDEFLATE_SUCCESS:
            guard produced == expected else { throw Failure("\(name) unpacks to a size other than it says") }
            return output
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            throw Failure("\(name) unpacks to more than it says")
        default:
            throw Failure("\(name): its compressed data is damaged or cut short")
        }
    }
}

/// Little-endian reads that throw instead of reading past the end.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int

    init(bytes: [UInt8], at position: Int) {
        self.bytes = bytes
        self.position = position
    }

    mutating func bytes(_ count: Int) throws(ZipArchive.Failure) -> ArraySlice<UInt8> {
        guard count >= 0, position >= 0, count <= bytes.count - position else {
            throw ZipArchive.Failure("it is cut short or damaged (a record runs past its end)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func uint16() throws(ZipArchive.Failure) -> UInt16 {
        let slice = try bytes(2)
        return UInt16(slice[slice.startIndex]) | UInt16(slice[slice.startIndex + 1]) << 8
    }

    mutating func uint32() throws(ZipArchive.Failure) -> UInt32 {
        let slice = try bytes(4)
        return slice.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
