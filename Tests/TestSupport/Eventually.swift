/// Waiting for work that finishes in the background (a queue worker, another replica): poll with
/// a deadline, never a fixed sleep, and say what was last seen when the deadline passes.

/// Polls `probe` until `condition` holds for what it returns; returns that value. Past `timeout`
/// it throws, naming `what` and the last value seen.
@discardableResult
public func eventually<Value>(
    _ what: String, within timeout: Duration = .seconds(10), poll: Duration = .milliseconds(100),
    _ probe: () async throws -> Value, until condition: (Value) -> Bool
) async throws -> Value {
    let deadline = ContinuousClock.now + timeout
    var last = try await probe()
    while !condition(last) {
        guard ContinuousClock.now < deadline else {
            throw TestServerError(description: "\(what): not within \(timeout); last seen: \(last)")
        }
        try await Task.sleep(for: poll)
        last = try await probe()
    }
    return last
}

/// Polls `probe` until it gives a value; returns it. Past `timeout` it throws, naming `what`.
@discardableResult
public func eventually<Value>(
    _ what: String = "the awaited value", within timeout: Duration = .seconds(10), poll: Duration = .milliseconds(100),
    _ probe: () async throws -> Value?
) async throws -> Value {
    let found = try await eventually(what, within: timeout, poll: poll, probe, until: { $0 != nil })
    return found!
}
