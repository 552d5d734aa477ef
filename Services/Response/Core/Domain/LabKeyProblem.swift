/// One validation failure in the LabKey envelope's `errors`.
package struct LabKeyProblem: Sendable, Equatable {
    package var field: String
    package var message: String

    package init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// A LabKey call refused, with every problem found in the original's words and order; the HTTP
/// layer answers it as the original does (400 with `errors`).
package struct LabKeyRefusal: Error, Equatable, Sendable {
    package var problems: [LabKeyProblem]

    package init(problems: [LabKeyProblem]) {
        self.problems = problems
    }
}
