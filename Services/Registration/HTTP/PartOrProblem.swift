import RegistrationCore

/// What `part` answers, or the words of registration's refusal of it (`RegistrationAdminError`):
/// a reply of several parts (one participant's record, the participants page) stands when one part
/// cannot be told, and says why. Any other failure fails the reply.
func partOrProblem<Value: Sendable>(_ part: () async throws -> Value) async throws -> (value: Value?, problem: String?) {
    do { return (try await part(), nil) } catch let error as RegistrationAdminError { return (nil, error.message) }
}
