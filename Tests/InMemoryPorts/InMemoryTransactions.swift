import ServiceKit
import Synchronization

/// State kept in memory with PostgreSQL's promise about units of work: each unit works on a copy
/// of the state, and the copy replaces the state only when the unit returns, so a refusal thrown
/// halfway leaves nothing behind, as a rollback does. Units, and changes made outside any unit
/// (`update`), take turns, so no unit's copy overwrites a change made while it ran.
package final class InMemoryTransactions<State: Sendable>: Sendable {
    private let state: Mutex<State>
    private let turns = Turns()

    package init(_ state: State) {
        self.state = Mutex(state)
    }

    /// The state as last committed.
    package var committed: State { state.withLock { $0 } }

    /// Runs `work` on a copy of the state (`WorkingCopy`); keeps the copy when `work` returns.
    package func run<Result: Sendable>(_ work: (WorkingCopy<State>) async throws -> Result) async throws -> Result {
        await turns.enter()
        do {
            let copy = WorkingCopy(state.withLock { $0 })
            let result = try await work(copy)
            state.withLock { $0 = copy.value }
            await turns.leave()
            return result
        } catch {
            await turns.leave()
            throw error
        }
    }

    /// A change outside any unit of work: committed at once.
    package func update<Value: Sendable>(_ change: (inout State) throws -> Value) async throws -> Value {
        await turns.enter()
        do {
            let value = try state.withLock { try change(&$0) }
            await turns.leave()
            return value
        } catch {
            await turns.leave()
            throw error
        }
    }
}

/// The copy of the state one unit of work changes; used only inside that unit, one step at a time.
package final class WorkingCopy<State>: @unchecked Sendable {
    package var value: State

    init(_ value: State) {
        self.value = value
    }
}

/// One at a time, in the order they asked.
private actor Turns {
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
    }
}
