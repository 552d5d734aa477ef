import Foundation

/// Which address a request comes from, for per-client limits.
///
/// The TCP peer, unless the peer is one of the configured trusted proxies: then the nearest
/// address in `X-Forwarded-For` that is not itself a trusted proxy (read from the right, since
/// everything left of what the trusted proxies appended can be forged by the client).
public struct ClientAddressResolver: Sendable {
    public let trustedProxies: [IPRange]

    public init(trustedProxies: [IPRange] = []) {
        self.trustedProxies = trustedProxies
    }

    /// Parses `10.0.0.0/8, 192.168.1.10, fd00::/8`; the failure names the first entry that is not one.
    public static func parse(_ list: String) -> Result<ClientAddressResolver, ParseError> {
        var ranges: [IPRange] = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let range = IPRange(entry) else { return .failure(ParseError(entry: entry)) }
            ranges.append(range)
        }
        return .success(ClientAddressResolver(trustedProxies: ranges))
    }

    public struct ParseError: Error, Sendable {
        public let entry: String
    }

    public func resolve(peer: String?, forwardedFor: String?) -> String {
        guard let peer else { return "unknown" }
        guard isTrusted(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { return peer }
            if !isTrusted(hop) { return address.description }
        }
        return peer
    }

    func isTrusted(_ address: String) -> Bool {
        guard let parsed = IPAddress(address) else { return false }
        return trustedProxies.contains { $0.contains(parsed) }
    }
}

/// An IPv4 or IPv6 address as bytes (4 or 16).
public struct IPAddress: Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(_ text: String) {
        guard let bytes = Self.parseV4(text) ?? Self.parseV6(text) else { return nil }
        self.init(bytes: bytes)
    }

    /// An address from its 4 or 16 bytes (an IPv4-mapped IPv6 address is that IPv4 address).
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16:
            // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is that IPv4 address.
            self.bytes = bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(bytes.suffix(4)) : bytes
        default: return nil
        }
    }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    static func parseV4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), part.allSatisfy(\.isNumber),
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseV6(_ text: String) -> [UInt8]? {
        var text = Substring(text)
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let v4 = parseV4(String(piece)) {
                    bytes += v4
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

/// An address with a prefix length: `10.0.0.0/8`, `fd00::/8`, or one address.
public struct IPRange: Sendable, Equatable {
    public let network: IPAddress
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        network = address
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(network.bytes, address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if mine & mask != theirs & mask { return false }
            remaining -= 8
        }
        return true
    }
}
