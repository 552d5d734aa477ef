/// base64url without padding (RFC 4648 section 5): the form every token, sealed cookie and
/// cursor handed out here takes, so it travels in URLs, headers and cookies unescaped.
///
/// Decoding is strict and bounded by its input: only the 64 letters of the alphabet (as bytes,
/// so no Unicode form of them is taken), no padding, no length that no bytes encode to, and no
/// stray bits in the last letter (so one value has one spelling).
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's value as a letter of the alphabet, 0xFF for a byte that is not one.
    static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, letter) in alphabet.enumerated() { values[Int(letter)] = UInt8(value) }
        return values
    }()

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var letters: [UInt8] = []
        letters.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next(), third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            letters.append(alphabet[Int(group >> 18 & 63)])
            letters.append(alphabet[Int(group >> 12 & 63)])
            if second != nil { letters.append(alphabet[Int(group >> 6 & 63)]) }
            if third != nil { letters.append(alphabet[Int(group & 63)]) }
        }
        return String(decoding: letters, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not base64url as `encode` writes it.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let letters = text.utf8
        guard letters.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(letters.count * 3 / 4)
        var group: UInt32 = 0
        var count = 0
        for letter in letters {
            let value = values[Int(letter)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                bytes.append(UInt8(group >> 16 & 0xFF))
                bytes.append(UInt8(group >> 8 & 0xFF))
                bytes.append(UInt8(group & 0xFF))
                group = 0
                count = 0
            }
        }
        switch count {
        case 2:
            guard group & 0xF == 0 else { return nil }
            bytes.append(UInt8(group >> 4 & 0xFF))
        case 3:
            guard group & 0x3 == 0 else { return nil }
            bytes.append(UInt8(group >> 10 & 0xFF))
            bytes.append(UInt8(group >> 2 & 0xFF))
        default:
            break
        }
        return bytes
    }
}
