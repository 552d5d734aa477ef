/// Reading query results in tests so that a check cannot pass on rows that never came: take the
/// one row a query must return, or all of them to count first.
extension AsyncSequence {
    /// The only element; throws when there is none or more than one.
    public func single() async throws -> Element {
        var found: [Element] = []
        for try await element in self {
            found.append(element)
            guard found.count == 1 else { throw TestServerError(description: "more than one row where one was expected") }
        }
        guard let only = found.first else { throw TestServerError(description: "no row where one was expected") }
        return only
    }

    /// Every element, in order (count them before checking each).
    public func collect() async throws -> [Element] {
        var found: [Element] = []
        for try await element in self { found.append(element) }
        return found
    }
}
