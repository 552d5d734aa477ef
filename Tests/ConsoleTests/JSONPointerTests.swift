import JSONText
import Testing

/// JSON Pointers (RFC 6901): how the console names its fields and finds the admin API's problems.
@Suite struct JSONPointerTests {
    @Test func tokensAreEscapedAndUnescapedAsTheRFCSays() throws {
        let pointer = try #require(JSONPointer("/a~1b/m~0n/~01"))
        #expect(pointer.tokens == ["a/b", "m~n", "~1"])
        #expect(pointer.description == "/a~1b/m~0n/~01")
        #expect(JSONPointer("")?.tokens == [])
        #expect(JSONPointer("no-slash") == nil)
    }

    @Test func setMakesMissingObjectsAppendsToArraysAndRemoves() throws {
        var document = JSONValue.object(["steps": .array([.object(["key": .string("q1")])])])
        try document.set(.string("Title"), at: JSONPointer("/rejoin/message")!)
        #expect(document[pointer: JSONPointer("/rejoin/message")!] == .string("Title"))
        try document.set(.string("q2"), at: JSONPointer("/steps/1/key")!)
        #expect(document[pointer: JSONPointer("/steps/1/key")!] == .string("q2"))
        try document.set(nil, at: JSONPointer("/steps/0")!)
        #expect(document[pointer: JSONPointer("/steps/0/key")!] == .string("q2"))
        try document.set(nil, at: JSONPointer("/rejoin/message")!)
        #expect(document[pointer: JSONPointer("/rejoin")!] == .object([:]))
    }

    @Test func anIndexPastTheEndOrInsideAScalarIsRefusedAndChangesNothing() throws {
        let original = JSONValue.object(["list": .array([]), "name": .string("x")])
        var document = original
        #expect(throws: JSONValue.PointerError.self) { try document.set(.bool(true), at: JSONPointer("/list/5")!) }
        #expect(throws: JSONValue.PointerError.self) { try document.set(.bool(true), at: JSONPointer("/name/en")!) }
        #expect(document == original)
    }

    @Test func withinMeansTheSamePlaceOrBelowIt() {
        let field = JSONPointer("/rejoin/message")!
        #expect(JSONPointer("/rejoin/message")!.isWithin(field))
        #expect(JSONPointer("/rejoin/message/es")!.isWithin(field))
        #expect(!JSONPointer("/rejoin")!.isWithin(field))
        #expect(!JSONPointer("/rejoin/messages")!.isWithin(field))
    }
}

extension JSONPointerTests {
    @Test func removingWhatIsNotThereMakesNothing() throws {
        var document = JSONValue.object(["name": .string("x")])
        try document.set(nil, at: JSONPointer("/rejoin/message")!)
        #expect(document == .object(["name": .string("x")]))
    }
}
