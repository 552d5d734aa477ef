import JSONText

/// What each kind of outside JSON text may make the parser build (docs/security.md, Budgets).
/// Each is set by what the text is, well above what a real study, phone or peer writes and far
/// below what would let one request, or a few at once, move a process's memory: a node (a value
/// or a member name) costs up to a few hundred bytes once built, whatever its text costs.
extension JSONValue.Budget {
    /// A response's answers: a MyStudies `processResponse`'s `data`, a schema app's `responses`.
    /// The longest surveys have hundreds of answers of a few values each, tens of thousands of
    /// nodes; the text is what the upload limit lets through.
    public static let responseAnswers = JSONValue.Budget(maxBytes: 16 << 20, maxNodes: 262_144, maxDepth: 64)

    /// A Sage archive's `metadata.json`: a manifest of at most a few hundred files of a few fields.
    public static let sageManifest = JSONValue.Budget(maxBytes: 256 << 10, maxNodes: 16_384, maxDepth: 32)

    /// A Sage archive's `info.json` and `answers_schema.json`: a handful of fields, a schema of
    /// the answers' types.
    public static let sageSideFile = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 65_536, maxDepth: 64)

    /// A Sage archive's `assessmentResult.json` or flat `answers.json`: a run's step history, its
    /// answers and their timings.
    public static let sageResult = JSONValue.Budget(maxBytes: 4 << 20, maxNodes: 262_144, maxDepth: 64)

    /// A Sage assessment document imported as an activity, and an activity's design as
    /// study-metadata serves it to the response service: steps, choices and texts of one activity.
    public static let activityDocument = JSONValue.Budget(maxBytes: 16 << 20, maxNodes: 1 << 20, maxDepth: 128)

    /// A whole study document (a draft pasted in the console, or re-read to compare two drafts):
    /// every activity, its steps and schedules.
    public static let studyDocument = JSONValue.Budget(maxBytes: 16 << 20, maxNodes: 2 << 20, maxDepth: 128)

    /// Every activity design of a study at once, as study-metadata sends them to be rehearsed:
    /// the designs as served carry their texts, so twice a study document.
    public static let storageRehearsal = JSONValue.Budget(maxBytes: 32 << 20, maxNodes: 4 << 20, maxDepth: 128)

    /// A schema app protocol: its modules, surveys and questions.
    public static let schemaProtocol = JSONValue.Budget(maxBytes: 8 << 20, maxNodes: 1 << 20, maxDepth: 64)
}
