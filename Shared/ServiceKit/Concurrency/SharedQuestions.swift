import Logging
import Synchronization

/// One asking for many askers of the same question, and no answer from an asking that began
/// before its asker asked.
///
/// While a question (a token's owner, a study's standing) is being asked of another service,
/// those who ask it again wait for the next asking, made once for all of them when the current
/// one is answered: group commit, for reads. Under load a question is asked about once per round
/// trip instead of once per asker, and every answer is as fresh as asking alone would have
/// given: an asking always starts after each of its askers arrived, so a token revoked before a
/// request arrived is never accepted for it. Nothing is kept once a round is answered.
///
/// The asking runs in its own task, so an asker that is cancelled (a browser that went away)
/// does not cancel the answer others wait for; it still gets that answer. At most one asking per
/// key is in flight, and a key is held only while someone waits on it: memory is bounded by the
/// requests in flight.
public final class SharedQuestions<Key: Hashable & Sendable, Answer: Sendable>: Sendable {
    /// Asks `key`'s question once, with the logger of the round's first asker.
    public typealias Ask = @Sendable (Key, Logger) async throws -> Answer

    private struct Asker {
        var continuation: CheckedContinuation<Answer, any Error>
        var logger: Logger
    }

    /// Per key being asked: those who arrived after that asking began, for the next one.
    private let waiting = Mutex<[Key: [Asker]]>([:])
    private let ask: Ask

    public init(ask: @escaping Ask) {
        self.ask = ask
    }

    /// Askers waiting for an asking of `key` that has not begun (not those of the one under way).
    public func waitingCount(for key: Key) -> Int {
        waiting.withLock { $0[key]?.count ?? 0 }
    }

    /// The answer to `key`'s question, from an asking that began after this call.
    public func answer(_ key: Key, logger: Logger) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let asker = Asker(continuation: continuation, logger: logger)
            let leads = waiting.withLock { waiting -> Bool in
                if waiting[key] != nil {
                    waiting[key]?.append(asker)
                    return false
                }
                waiting[key] = []
                return true
            }
            if leads { Task { await self.rounds(of: key, startingWith: [asker]) } }
        }
    }

    /// Asks for `askers`, answers them, then asks again for those who came meanwhile, until no
    /// one waits; then lets the key go.
    private func rounds(of key: Key, startingWith first: [Asker]) async {
        var askers = first
        while let leader = askers.first {
            let answer: Result<Answer, any Error>
            do {
                answer = .success(try await ask(key, leader.logger))
            } catch {
                answer = .failure(error)
            }
            for asker in askers { asker.continuation.resume(with: answer) }
            askers = waiting.withLock { waiting -> [Asker] in
                let next = waiting[key] ?? []
                if next.isEmpty {
                    waiting[key] = nil
                } else {
                    waiting[key] = []
                }
                return next
            }
        }
    }
}
