extension QRCode {
    /// The symbol as a PNG image: 1-bit greyscale, `scale` pixels per module, the quiet zone
    /// included. The pixels are stored without compression (a few kilobytes at the sizes mail
    /// and pages use), so no deflate implementation is needed: zlib's "stored" blocks are valid
    /// deflate data every reader inflates.
    public func png(scale: Int = 8) -> [UInt8] {
        precondition((1...64).contains(scale), "scale must be 1 to 64")
        let side = (size + 2 * Self.quietZone) * scale
        let rowBytes = (side + 7) / 8
        var raw: [UInt8] = []
        raw.reserveCapacity(side * (rowBytes + 1))
        for y in 0..<side {
            raw.append(0)  // filter type: none
            let row = y / scale - Self.quietZone
            var byte: UInt8 = 0
            var bits = 0
            for x in 0..<side {
                let column = x / scale - Self.quietZone
                let dark = (0..<size).contains(row) && (0..<size).contains(column) && isDark(row: row, column: column)
                byte = byte << 1 | (dark ? 0 : 1)
                bits += 1
                if bits == 8 {
                    raw.append(byte)
                    byte = 0
                    bits = 0
                }
            }
            if bits > 0 { raw.append(byte << (8 - bits) | (0xFF >> bits)) }
        }
        var header: [UInt8] = []
        header += PNGChunk.bigEndian(UInt32(side)) + PNGChunk.bigEndian(UInt32(side))
        header += [1, 0, 0, 0, 0]  // bit depth 1, greyscale, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + PNGChunk.make("IHDR", header)
            + PNGChunk.make("IDAT", PNGChunk.zlibStored(raw))
            + PNGChunk.make("IEND", [])
    }
}

/// The pieces of a PNG file: chunks with their CRC-32, and a zlib stream of stored blocks.
enum PNGChunk {
    static func make(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let length = min(65_535, data.count - start)
            let last = start + length == data.count
            out.append(last ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[start..<start + length]
            start += length
        } while start < data.count
        return out + bigEndian(adler32(data))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
