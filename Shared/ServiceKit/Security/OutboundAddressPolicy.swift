import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which addresses a request to a URL a user chose may reach. A study admin names the
/// forwarding target; without this, that admin could make the service call its own internal
/// routes, the database host, a cloud metadata endpoint or anything else on the private network
/// (server-side request forgery). Private, loopback, link-local and other non-public addresses are
/// refused unless the operator allows them (`FORWARDING_ALLOW_PRIVATE_TARGETS`, for a target on
/// the same private network, and for tests).
///
/// A host name is checked by resolving it and checking every address, just before each request.
/// The HTTP client resolves the name again to connect, so a name whose DNS answer changes in
/// between (DNS rebinding) can still slip through: an operator who needs that closed puts the
/// service behind an egress proxy or firewall (docs/security.md).
public struct OutboundAddressPolicy: Sendable {
    public var allowPrivate: Bool

    public init(allowPrivate: Bool) {
        self.allowPrivate = allowPrivate
    }

    /// Addresses that are not the public internet (IANA special-purpose registries).
    public static let nonPublic: [IPRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16",
        "fc00::/7", "fe80::/10", "ff00::/8",
    ].map { IPRange($0)! }

    public static func isPublic(_ address: IPAddress) -> Bool {
        !nonPublic.contains { $0.contains(address) }
    }

    /// `localhost` and names under it, and loopback literals.
    public static func isLoopback(host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare.hasSuffix(".localhost") { return true }
        guard let address = IPAddress(bare) else { return false }
        return IPRange("127.0.0.0/8")!.contains(address) || IPRange("::1/128")!.contains(address)
    }

    /// Why `host` may not be reached, judged without DNS: an address literal or a loopback name.
    /// Nil for other names (checked when resolved) and for allowed addresses.
    public func refusal(host: String) -> String? {
        if allowPrivate { return nil }
        if Self.isLoopback(host: host) { return "\(host) is this machine" }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if let address = IPAddress(bare), !Self.isPublic(address) { return "\(bare) is not a public address" }
        return nil
    }

    /// Resolves `host` and checks every address it has; the refusal, or nil when it may be reached.
    public func check(host: String) async -> String? {
        if let refusal = refusal(host: host) { return refusal }
        if allowPrivate { return nil }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if IPAddress(bare) != nil { return nil }
        let addresses: [IPAddress]
        do {
            addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(bare) }
        } catch {
            return "\(bare) could not be resolved"
        }
        guard !addresses.isEmpty else { return "\(bare) could not be resolved" }
        if let inside = addresses.first(where: { !Self.isPublic($0) }) {
            return "\(bare) resolves to \(inside), which is not a public address"
        }
        return nil
    }

    struct ResolutionFailed: Error {}

    /// Every IPv4 and IPv6 address `host` resolves to (getaddrinfo, blocking).
    static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { throw ResolutionFailed() }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                case AF_INET6:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
