import Foundation
import InMemoryPorts
import JSONText
import ResponseCore
import ServiceKit
import StudyModels
import Testing

/// `ResponseSubmission`'s rules (`processResponse`), run against the in-memory arrivals: what is
/// refused, in the original's order and words, and that a refusal stores nothing.
@Suite struct ResponseSubmissionRulesTests {
    static let token = "app-token-1"

    static func arrivals(withdrawn: Bool = false, collecting: Bool = true) -> InMemoryResponses {
        let responses = InMemoryResponses()
        responses.enrol(
            .init(id: 7, studyKey: "SLEEP", studyId: "SLEEP", withdrawn: withdrawn, collectionEnabled: collecting), appToken: token)
        return responses
    }

    static func call(
        names: [String] = ["type", "participantId", "metadata", "data"], token: String? = Self.token,
        metadata: JSONObject? = [
            "activityId": .string("daily"), "version": .string("1.0"), "activityRunId": .string("3"), "language": .string("en"),
        ],
        data: String? = #"{"answers":1}"#
    ) -> ResponseSubmission.Call {
        ResponseSubmission.Call(
            names: names, appToken: token, metadata: metadata, metadataText: nil, data: data)
    }

    static func refusal(_ call: ResponseSubmission.Call, in responses: InMemoryResponses) async -> [String] {
        do {
            try await ResponseSubmission(responses: responses).submit(call)
            return []
        } catch let refusal as LabKeyRefusal {
            return refusal.problems.map { "\($0.field): \($0.message)" }
        } catch {
            return ["unexpected \(error)"]
        }
    }

    @Test func aCompleteCallIsStoredWithTheTokensHashAsItsSender() async throws {
        let responses = Self.arrivals()
        try await ResponseSubmission(responses: responses).submit(Self.call())
        let stored = responses.stored
        try #require(stored.count == 1)
        #expect(stored[0].participantId == 7)
        #expect(stored[0].activityId == "daily")
        #expect(stored[0].version == "1.0")
        #expect(stored[0].data == #"{"answers":1}"#)
        let metadata = try JSONValue.parse(Array(stored[0].metadata.utf8), budget: .studyDocument)
        #expect(metadata.object?["activityRunId"]?.text == "3")
    }

    @Test func anUnknownNameIsABindingErrorBeforeAnythingElse() async {
        let responses = Self.arrivals()
        let problems = await Self.refusal(Self.call(names: ["type", "participantId", "zzz", "aaa"], token: nil), in: responses)
        #expect(problems == [#"form: Error binding property: Unrecognized field "aaa""#])
        #expect(responses.stored.isEmpty)
    }

    @Test func anAppTokenNameIsAcceptedAndIgnoredAsTheOriginalDoes() async throws {
        let responses = Self.arrivals()
        try await ResponseSubmission(responses: responses).submit(Self.call(names: ["participantId", "metadata", "data", "appToken"]))
        #expect(responses.stored.count == 1)
    }

    @Test func everyMissingPartIsNamedInTheOriginalsOrderAndNothingIsStored() async {
        let responses = Self.arrivals(collecting: false)
        let problems = await Self.refusal(Self.call(metadata: [:], data: nil), in: responses)
        #expect(problems == [
            "activityId: ActivityId not included in request",
            "version: SurveyVersion not included in request",
            "data: Response not included in request",
            "form: Response collection is not currently enabled for study [ SLEEP ]",
        ])
        #expect(responses.stored.isEmpty)
    }

    @Test func withoutMetadataOrAParticipantTheOriginalsWordsAreAnswered() async {
        let responses = Self.arrivals()
        #expect(await Self.refusal(Self.call(metadata: nil), in: responses) == ["form: Metadata not found"])
        #expect(await Self.refusal(Self.call(token: "  "), in: responses) == ["participantId: ParticipantId not included in request"])
        #expect(await Self.refusal(Self.call(token: "someone-else"), in: responses) == ["participantId: Unable to identify participant"])
        #expect(responses.stored.isEmpty)
    }

    @Test func aLabelNoDesignCanHaveIsRefusedNotStoredToFailLater() async {
        let responses = Self.arrivals()
        let problems = await Self.refusal(Self.call(metadata: ["activityId": .string("daily"), "version": .string("1.0/../x")]), in: responses)
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("version: SurveyVersion '1.0/../x' is not a version") == true)
        #expect(responses.stored.isEmpty)
    }

    @Test func anEscapedNULIsRefusedButAnEscapedBackslashBeforeItIsText() async throws {
        let responses = Self.arrivals()
        let problems = await Self.refusal(Self.call(data: #"{"a":"x\u0000"}"#), in: responses)
        #expect(problems == [#"data: The response contains a NUL character (\u0000), which cannot be stored"#])
        #expect(responses.stored.isEmpty)
        try await ResponseSubmission(responses: responses).submit(Self.call(data: #"{"a":"x\\u0000"}"#))
        #expect(responses.stored.count == 1)
    }

    @Test func whatTheWriteFindsIsAnsweredInTheOriginalsWords() async {
        let withdrawn = Self.arrivals(withdrawn: true)
        #expect(await Self.refusal(Self.call(), in: withdrawn) == ["participantId: Participant has withdrawn from study"])
        let paused = Self.arrivals(collecting: false)
        #expect(await Self.refusal(Self.call(), in: paused) == ["form: Response collection is not currently enabled for study [ SLEEP ]"])
        #expect(withdrawn.stored.isEmpty && paused.stored.isEmpty)
    }
}
