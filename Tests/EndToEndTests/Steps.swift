import Foundation

/// Names the steps of a long test: each step's time is printed, and an error thrown inside a step
/// comes out with the step's name and how long it ran, so a failure cut short in CI's summary
/// still says where it happened (`HTTPClientError.deadlineExceeded` alone does not).
struct Steps {
    struct Failed: Error, CustomStringConvertible {
        let step: String
        let after: Duration
        let error: any Error
        var description: String { "step '\(step)' failed after \(after): \(error)" }
    }

    let test: String

    func run<T>(_ step: String, _ body: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        do {
            let value = try await body()
            print("\(test): \(step) took \(ContinuousClock.now - started)")
            return value
        } catch {
            throw Failed(step: step, after: ContinuousClock.now - started, error: error)
        }
    }
}
