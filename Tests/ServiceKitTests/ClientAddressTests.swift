import ServiceKit
import ServiceKitHTTP
import Testing

/// Telling a client's address behind trusted proxies, and the address parsing under it.
@Suite struct ClientAddressTests {
    @Test func addressesAndRangesParse() throws {
        #expect(IPAddress("192.0.2.7")?.bytes == [192, 0, 2, 7])
        #expect(IPAddress("2001:db8::1")?.bytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
        #expect(IPAddress("::ffff:192.0.2.7")?.bytes == [192, 0, 2, 7])
        #expect(IPAddress("fe80::1%eth0")?.bytes.count == 16)
        for bad in ["", "1.2.3", "1.2.3.256", "01234.1.1.1", "1::2::3", "2001:db8:::1", "12345::", "host.example", "1.2.3.4 "] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        let private10 = try #require(IPRange("10.0.0.0/8"))
        #expect(private10.contains(try #require(IPAddress("10.200.3.4"))))
        #expect(!private10.contains(try #require(IPAddress("11.0.0.1"))))
        let odd = try #require(IPRange("192.168.4.0/22"))
        #expect(odd.contains(try #require(IPAddress("192.168.7.255"))))
        #expect(!odd.contains(try #require(IPAddress("192.168.8.0"))))
        #expect(try #require(IPRange("fd00::/8")).contains(try #require(IPAddress("fd12:3456::1"))))
        #expect(!(try #require(IPRange("fd00::/8")).contains(try #require(IPAddress("10.0.0.1")))))
        #expect(IPRange("10.0.0.0/33") == nil)
        #expect(IPRange("10.0.0.0/x") == nil)
    }

    @Test func onlyATrustedPeerIsBelieved() throws {
        let resolver = try ClientAddressResolver.parse("127.0.0.1, 10.0.0.0/8").get()
        // A direct client: its own address, whatever it claims.
        #expect(resolver.resolve(peer: "198.51.100.9", forwardedFor: "203.0.113.5") == "198.51.100.9")
        // Through the proxy: the address the proxy appended.
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "203.0.113.5") == "203.0.113.5")
        // A client that writes its own X-Forwarded-For cannot pick the address: the rightmost
        // untrusted entry (appended by the proxy) wins.
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "192.0.2.1, 203.0.113.5") == "203.0.113.5")
        // Through two trusted proxies.
        #expect(resolver.resolve(peer: "10.1.1.1", forwardedFor: "203.0.113.5, 10.2.2.2") == "203.0.113.5")
        // Garbage, or nothing forwarded: the peer.
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "not-an-address") == "127.0.0.1")
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: nil) == "127.0.0.1")
        #expect(resolver.resolve(peer: nil, forwardedFor: "203.0.113.5") == "unknown")
        // No proxies configured: always the peer.
        #expect(ClientAddressResolver().resolve(peer: "127.0.0.1", forwardedFor: "203.0.113.5") == "127.0.0.1")
        // A bad entry is named.
        guard case .failure(let error) = ClientAddressResolver.parse("10.0.0.0/8, proxy.internal") else {
            Issue.record("a host name was accepted")
            return
        }
        #expect(error.entry == "proxy.internal")
    }
}
