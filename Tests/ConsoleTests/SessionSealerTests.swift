import ConsoleCore
import Crypto
import Foundation
import Testing

/// The console's session cookie: what it takes to forge, alter, replay or outlive one.
@Suite struct SessionSealerTests {
    let sealer = SessionSealer(consoleKey: SymmetricKey(size: .bits256))
    let session = ConsoleSession(
        token: "admin-token-123", email: "root@studystack.test", expiresAt: Date().addingTimeInterval(3600))

    @Test func aSealedSessionOpensToTheSameSession() throws {
        let cookie = try sealer.seal(session)
        #expect(sealer.open(cookie) == session)
        // The token is not readable in the cookie.
        #expect(!cookie.contains("admin-token-123"))
        #expect(!(Data(base64Encoded: cookie) ?? Data()).contains(Data("admin-token".utf8)))
    }

    @Test func everyOneByteChangeIsRefused() throws {
        let cookie = Array(try sealer.seal(session).utf8)
        #expect(cookie.count > 100)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var refused = 0
        for index in cookie.indices {
            var altered = cookie
            altered[index] = alphabet.first { $0 != cookie[index] }!
            if sealer.open(String(decoding: altered, as: UTF8.self)) == nil { refused += 1 }
        }
        // (The last character carries only some bits of the final byte, but a spelling with other
        // bits set there is not base64url as it is written: no position opens.)
        #expect(refused == cookie.count, "\(cookie.count - refused) altered cookies opened")
    }

    @Test func anotherConsolesKeyOpensNothing() throws {
        let other = SessionSealer(consoleKey: SymmetricKey(size: .bits256))
        #expect(other.open(try sealer.seal(session)) == nil)
    }

    @Test func anExpiredSessionIsRefused() throws {
        var old = session
        old.expiresAt = Date().addingTimeInterval(-1)
        #expect(sealer.open(try sealer.seal(old)) == nil)
        #expect(sealer.open(try sealer.seal(session), now: Date().addingTimeInterval(3601)) == nil)
    }

    /// An opened session is kept by its cookie value (`SessionSealer.opened`); its expiry still
    /// counts on every use.
    @Test func aSessionOpenedBeforeStillExpires() throws {
        let cookie = try sealer.seal(session)
        #expect(sealer.open(cookie) == session)
        #expect(sealer.open(cookie) == session)
        #expect(sealer.open(cookie, now: Date().addingTimeInterval(3601)) == nil)
        #expect(sealer.open(cookie) == session)
        // Another console's sealer, with another key, keeps nothing of this one's.
        #expect(SessionSealer(consoleKey: SymmetricKey(size: .bits256)).open(cookie) == nil)
    }

    @Test func whatIsNotACookieIsRefusedWithoutWork() {
        for value in ["", "a", "not base64!", String(repeating: "A", count: SessionSealer.maxCookieLength + 1), "é"] {
            #expect(sealer.open(value) == nil, "\(value.prefix(20))")
        }
    }

    @Test func theFormTokenMustBeTheSessionsOwn() {
        #expect(session.acceptsForm(token: session.csrf))
        #expect(!session.acceptsForm(token: nil))
        #expect(!session.acceptsForm(token: ""))
        #expect(!session.acceptsForm(token: ConsoleSession.makeCSRFToken()))
        #expect(!session.acceptsForm(token: String(session.csrf.dropLast())))
        // Each session gets its own.
        #expect(ConsoleSession.makeCSRFToken() != ConsoleSession.makeCSRFToken())
        #expect(session.csrf.count == 43)
    }
}
