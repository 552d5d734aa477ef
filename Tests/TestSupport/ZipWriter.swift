import CZlib

/// Builds ZIP archives for the tests, honest or not: each entry can lie about its sizes, be
/// marked a symbolic link, or carry any name.
public struct ZipWriter {
    public struct Entry {
        public var name: String
        public var data: [UInt8]
        public var deflate = true
        public var declaredSize: Int?
        public var symlink = false
        public var crc: UInt32?

        public init(name: String, data: [UInt8], deflate: Bool = true, declaredSize: Int? = nil, symlink: Bool = false, crc: UInt32? = nil) {
            self.name = name
            self.data = data
            self.deflate = deflate
            self.declaredSize = declaredSize
            self.symlink = symlink
            self.crc = crc
        }
    }

    public var entries: [Entry] = []

    public init() {}

    public mutating func add(_ name: String, _ data: [UInt8], deflate: Bool = true) {
        entries.append(Entry(name: name, data: data, deflate: deflate))
    }

    public static func crc(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress, UInt32($0.count))) }
    }

    /// Raw deflate of `data`.
    public static func deflated(_ data: [UInt8]) -> [UInt8] {
        deflated(chunks: 1) { data }
    }

    /// Raw deflate of `chunks` repetitions of what `chunk` gives, without holding them all.
    public static func deflated(chunks: Int, _ chunk: () -> [UInt8]) -> [UInt8] {
        var stream = z_stream()
        _ = deflateInit2_(&stream, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        for index in 0..<chunks {
            var input = chunk()
            let flush = index == chunks - 1 ? Z_FINISH : Z_NO_FLUSH
            input.withUnsafeMutableBufferPointer { inputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                repeat {
                    let produced = buffer.withUnsafeMutableBufferPointer { out -> Int in
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        _ = deflate(&stream, flush)
                        return out.count - Int(stream.avail_out)
                    }
                    output += buffer[0..<produced]
                } while stream.avail_out == 0 || (flush == Z_FINISH && stream.avail_in > 0)
            }
        }
        return output
    }

    /// The archive's bytes; `compressed` gives an entry's compressed form when it is known already.
    public func bytes(compressed: [String: (data: [UInt8], size: Int, crc: UInt32)] = [:]) -> [UInt8] {
        var out: [UInt8] = []
        var directory: [UInt8] = []
        func u16(_ value: Int, _ into: inout [UInt8]) { into += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func u32(_ value: UInt32, _ into: inout [UInt8]) { into += (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
        for entry in entries {
            let known = compressed[entry.name]
            let data = known?.data ?? (entry.deflate ? Self.deflated(entry.data) : entry.data)
            let size = entry.declaredSize ?? known?.size ?? entry.data.count
            let crc = entry.crc ?? known?.crc ?? Self.crc(entry.data)
            let method = entry.deflate || known != nil ? 8 : 0
            let name = Array(entry.name.utf8)
            let offset = out.count
            u32(0x0403_4B50, &out); u16(20, &out); u16(0x800, &out); u16(method, &out); u32(0, &out)
            u32(crc, &out); u32(UInt32(data.count), &out); u32(UInt32(size), &out); u16(name.count, &out); u16(0, &out)
            out += name + data
            u32(0x0201_4B50, &directory); u16(0x031E, &directory); u16(20, &directory); u16(0x800, &directory); u16(method, &directory)
            u32(0, &directory); u32(crc, &directory); u32(UInt32(data.count), &directory); u32(UInt32(size), &directory)
            u16(name.count, &directory); u16(0, &directory); u16(0, &directory); u16(0, &directory); u16(0, &directory)
            u32(entry.symlink ? 0xA1FF_0000 : 0x81A4_0000, &directory); u32(UInt32(offset), &directory)
            directory += name
        }
        let directoryOffset = out.count
        out += directory
        u32(0x0605_4B50, &out); u16(0, &out); u16(0, &out); u16(entries.count, &out); u16(entries.count, &out)
        u32(UInt32(directory.count), &out); u32(UInt32(directoryOffset), &out); u16(0, &out)
        return out
    }
}
