import JSONText
import Logging
import ServiceKit
import Synchronization
import Testing

/// Shared questions without a network: those who ask while an asking is under way share the next
/// one, never the one under way (so a change before they asked is in their answer), failures
/// reach their round only, keys do not wait for each other, and nothing is held afterwards.
@Suite struct SharedQuestionsTests {
    struct Down: Error {}

    /// The other service: each asking reads `truth` as it begins, and is held until the test lets
    /// that many askings finish.
    final class Service: Sendable {
        private struct State {
            var truth = "valid"
            var started: [(key: String, read: String)] = []
            var finishing = 0
            var failNext = false
        }
        private let state = Mutex(State())

        var started: [(key: String, read: String)] { state.withLock { $0.started } }
        func set(_ truth: String) { state.withLock { $0.truth = truth } }
        func failNextAsking() { state.withLock { $0.failNext = true } }
        /// Lets `count` more askings finish.
        func release(_ count: Int = 1) { state.withLock { $0.finishing += count } }

        func ask(_ key: String, _ logger: Logger) async throws -> String {
            let (index, read, fails) = state.withLock { state -> (Int, String, Bool) in
                state.started.append((key, state.truth))
                let fails = state.failNext
                state.failNext = false
                return (state.started.count - 1, state.truth, fails)
            }
            try await GroupCommitTests.poll("the test to release asking \(index + 1)") { state.withLock { $0.finishing > index } }
            if fails { throw Down() }
            return "\(key): \(read)"
        }
    }

    static let logger = Logger(label: "test")

    static func ask(_ key: String, of questions: SharedQuestions<String, String>) -> Task<Result<String, any Error>, Never> {
        Task {
            do { return .success(try await questions.answer(key, logger: logger)) } catch { return .failure(error) }
        }
    }

    @Test func whoAsksDuringAnAskingGetsTheNextOneAndSoSeesWhatChangedBeforeTheyAsked() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        let first = Self.ask("token", of: questions)
        try await GroupCommitTests.poll("the first asking") { service.started.count == 1 }
        // Revoked after the first asking began and before the next two asked.
        service.set("revoked")
        let second = Self.ask("token", of: questions)
        let third = Self.ask("token", of: questions)
        try await GroupCommitTests.poll("two waiting") { questions.waitingCount(for: "token") == 2 }
        #expect(service.started.count == 1)
        service.release(2)

        #expect(try await first.value.get() == "token: valid")
        #expect(try await second.value.get() == "token: revoked")
        #expect(try await third.value.get() == "token: revoked")
        let started = service.started
        try #require(started.count == 2)
        #expect(started.map(\.read) == ["valid", "revoked"])
    }

    @Test func twentyWhoAskDuringOneAskingShareOneMore() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        let first = Self.ask("study", of: questions)
        try await GroupCommitTests.poll("the first asking") { service.started.count == 1 }
        let rest = (1...20).map { _ in Self.ask("study", of: questions) }
        try await GroupCommitTests.poll("twenty waiting") { questions.waitingCount(for: "study") == 20 }
        service.release(2)

        #expect(try await first.value.get() == "study: valid")
        var answers: [String] = []
        for task in rest { answers.append(try await task.value.get()) }
        try #require(answers.count == 20)
        for answer in answers { #expect(answer == "study: valid") }
        #expect(service.started.count == 2)
        #expect(questions.waitingCount(for: "study") == 0)
    }

    @Test func aFailureReachesItsRoundOnlyAndTheNextRoundAsksAgain() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        service.failNextAsking()
        let failing = [Self.ask("token", of: questions)]
        try await GroupCommitTests.poll("the failing asking") { service.started.count == 1 }
        let waiting = [Self.ask("token", of: questions), Self.ask("token", of: questions)]
        try await GroupCommitTests.poll("two waiting") { questions.waitingCount(for: "token") == 2 }
        service.release(2)

        for task in failing {
            guard case .failure(let error) = await task.value else {
                Issue.record("the failed asking's asker was answered")
                continue
            }
            #expect(error is Down)
        }
        for task in waiting { #expect(try await task.value.get() == "token: valid") }
        #expect(service.started.count == 2)
    }

    @Test func differentKeysDoNotWaitForEachOther() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        let held = Self.ask("a", of: questions)
        try await GroupCommitTests.poll("a's asking") { service.started.count == 1 }
        let other = Self.ask("b", of: questions)
        try await GroupCommitTests.poll("b's own asking") { service.started.count == 2 }
        #expect(questions.waitingCount(for: "a") == 0)
        #expect(service.started.map(\.key) == ["a", "b"])
        service.release(2)
        #expect(try await held.value.get() == "a: valid")
        #expect(try await other.value.get() == "b: valid")
    }

    @Test func nothingIsKeptOnceARoundIsAnsweredSoTheNextAskerAsksAgain() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        service.release(1)
        #expect(try await Self.ask("token", of: questions).value.get() == "token: valid")
        service.set("revoked")
        service.release(1)
        #expect(try await Self.ask("token", of: questions).value.get() == "token: revoked")
        #expect(service.started.count == 2)
    }

    @Test func aCancelledAskerDoesNotCancelTheAskingOthersWaitFor() async throws {
        let service = Service()
        let questions = SharedQuestions<String, String>(ask: service.ask)
        let first = Self.ask("token", of: questions)
        try await GroupCommitTests.poll("the first asking") { service.started.count == 1 }
        // The second round's first asker (whose logger it uses) and one more.
        let leader = Self.ask("token", of: questions)
        try await GroupCommitTests.poll("one waiting") { questions.waitingCount(for: "token") == 1 }
        let follower = Self.ask("token", of: questions)
        try await GroupCommitTests.poll("two waiting") { questions.waitingCount(for: "token") == 2 }
        first.cancel()
        leader.cancel()
        service.release(2)
        #expect(try await first.value.get() == "token: valid")
        #expect(try await leader.value.get() == "token: valid")
        #expect(try await follower.value.get() == "token: valid")
        #expect(service.started.count == 2)
    }

    /// Outside text keyed as it was sent: "Café" written with é (U+00E9) and with e and U+0301 are
    /// equal as Swift `String`s, so registration keys a study id by its scalars, and two such ids
    /// are asked apart, each getting its own answer.
    @Test func canonicallyEquivalentIdsKeyedByScalarsAreAskedApart() async throws {
        let service = Service()
        let questions = SharedQuestions<ScalarKey, String> { key, logger in try await service.ask(key.text, logger) }
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
        try #require(composed == decomposed, "Swift's String equality merges them")
        let first = Task { try await questions.answer(ScalarKey(composed), logger: Self.logger) }
        try await GroupCommitTests.poll("the first asking") { service.started.count == 1 }
        let second = Task { try await questions.answer(ScalarKey(decomposed), logger: Self.logger) }
        try await GroupCommitTests.poll("its own asking, not a wait for the next of the first") { service.started.count == 2 }
        service.release(2)
        let answers = [try await first.value, try await second.value]
        #expect(answers.map { Array($0.unicodeScalars) } == [Array("\(composed): valid".unicodeScalars), Array("\(decomposed): valid".unicodeScalars)])
    }
}
