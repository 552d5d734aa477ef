import JSONText
import ServiceKitHTTP
import Testing

/// An app's call body (docs/security.md, Budgets): its members together, not each, are held to
/// one call's budget.
@Suite struct LegacyEnvelopeBudgetTests {
    static func oneMemberObjects(_ count: Int) -> String {
        "[" + Array(repeating: #"{"a":1}"#, count: count).joined(separator: ",") + "]"
    }

    /// An app's envelope: its members together, not each, are held to one call's budget.
    @Test func anEnvelopeOfManyMembersIsHeldToOneBudget() {
        let member = Self.oneMemberObjects(10_000)
        let names = (0..<10).map { "\"m\($0)\":\(member)" }.joined(separator: ",")
        let body = Array("{\(names)}".utf8)
        #expect(LegacyEnvelope.members(ofBody: body, keepingCompoundText: false) == nil, "30,000 nodes each, ten of them")
        let kept = LegacyEnvelope.members(ofBody: body, keepingCompoundText: true)
        #expect(kept?.count == 10, "kept as text, they build nothing")
        let small = Array(#"{"a": [1, 2], "b": {"c": true}}"#.utf8)
        #expect(LegacyEnvelope.members(ofBody: small, keepingCompoundText: false)?.count == 2)
    }
}
