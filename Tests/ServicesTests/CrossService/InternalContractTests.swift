import Foundation
import InternalContracts
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The internal calls are defined once (`InternalCalls`): each definition is documented in its
/// receiver's internal OpenAPI document with every status it may answer, and each documented
/// internal operation is a definition. (That every mounted internal route is a definition is
/// checked by `OpenAPICoverageTests`, against the same list.)
@Suite struct InternalContractTests {
    static let documents: [ServiceName: String] = [
        .studyMetadata: "study-metadata-internal.yaml", .registration: "registration-internal.yaml",
        .response: "response-internal.yaml",
    ]

    static func key(_ endpoint: any InternalEndpointDescription) -> String {
        "\(endpoint.method.rawValue) \(endpoint.template)"
    }

    @Test func everyDefinitionIsDocumentedByItsReceiverAndNothingElseIs() throws {
        let all = InternalCalls.all
        #expect(all.count == 30)
        #expect(Set(all.map { "\($0.receiver.rawValue) \(Self.key($0))" }).count == all.count, "an endpoint defined twice")
        for (receiver, document) in Self.documents {
            // whoami is ServiceKit's: every service answers it, study-metadata's document describes it.
            let defined = Set(all.filter { $0.receiver == receiver && !$0.template.hasSuffix("/whoami") }.map(Self.key))
                .union(receiver == .studyMetadata ? ["GET /internal/v1/whoami"] : [])
            let documented = try OpenAPIDocuments.operations(in: [document]).filter { $0.contains(" /internal/") }
            #expect(defined.count > 2)
            #expect(documented.subtracting(defined).sorted() == [], "\(document): documented internal operations without a definition")
            #expect(defined.subtracting(documented).sorted() == [], "\(document): definitions without a documented operation")
        }
    }

    @Test func everyStatusAnEndpointMayAnswerIsDocumented() throws {
        let statuses = try OpenAPIDocuments.statuses(in: Array(Self.documents.values))
        let endpoints = InternalCalls.all.filter { $0.receiver == .studyMetadata || !$0.template.hasSuffix("/whoami") }
        #expect(endpoints.count == 28)
        for endpoint in endpoints {
            let documented = statuses[Self.key(endpoint)] ?? []
            var expected = Set(endpoint.answers).union(endpoint.refusals.map(\.status)).union([401])
            if Set(endpoint.callers) != Set(ServiceName.allCases) { expected.insert(403) }
            #expect(expected.subtracting(documented).sorted() == [], "\(Self.key(endpoint)) answers these undocumented")
        }
    }

    @Test func pathsAreBuiltFromTheTemplateOneEscapedSegmentEach() throws {
        let path = try InternalCalls.activity.path(["studyId": "S 1", "activityId": "a/b", "version": "1.0"])
        #expect(path == "/internal/v1/studies/S%201/activities/a%2Fb/versions/1.0")
        #expect(InternalCalls.activity.routePattern(under: InternalEndpoints.prefix) == "/v1/studies/:studyId/activities/:activityId/versions/:version")
        #expect(InternalCalls.activity.parameterNames == ["studyId", "activityId", "version"])
        // A parameter left out is the caller's error, thrown, never a path with a hole.
        #expect(throws: InternalCallError.self) { try InternalCalls.activity.path(["studyId": "S1"]) }
        #expect(throws: InternalCallError.self) { try InternalCalls.runWeeks.path(["studyId": ""]) }
    }

    /// A hash a caller asks about is 64 ASCII hex digits counted by scalar. `Character.isHexDigit`,
    /// which the receivers used, also takes the fullwidth forms ("ａ", U+FF41).
    @Test func aHashIsSixtyFourASCIIHexDigitsCountedByScalar() {
        #expect(APIKeyQuery(keyHash: String(repeating: "aF", count: 32)).isWellFormed)
        #expect(!APIKeyQuery(keyHash: String(repeating: "\u{FF41}", count: 64)).isWellFormed)
        #expect(!AdminSessionQuery(tokenHash: String(repeating: "0", count: 63) + "\u{FF26}").isWellFormed)
        let enrollment = InvitationEnrollment(
            studyId: "S1", invitationId: UUID(), participantTokenHash: String(repeating: "0", count: 63) + "\u{FF10}",
            enrolledAt: Date())
        #expect(!enrollment.isWellFormed)
        // 64 characters, 65 scalars: an accent combined with the last letter.
        #expect(!APIKeyQuery(keyHash: String(repeating: "a", count: 63) + "e\u{301}").isWellFormed)
        #expect(!APIKeyQuery(keyHash: String(repeating: "a", count: 63)).isWellFormed)
    }

    @Test func aReplyIsAnsweredWithTheStatusItsEndpointPicks() {
        let problem = InvitationTokenReply.Problem(index: 0, field: "age", message: "not a number")
        #expect(InternalCalls.invitationTokens.status(InvitationTokenReply(tokens: [], problems: [problem])) == 422)
        #expect(InternalCalls.invitationTokens.status(InvitationTokenReply(tokens: [], problems: [])) == 200)
        #expect(InternalCalls.pushCredentialRemoval.answers == [204])
        #expect(InternalCalls.studies.answers == [200])
    }
}
