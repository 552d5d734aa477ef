/// `PUT /admin/v1/studies/{studyId}/draft/assessments/{identifier}`: what a Sage assessment became.
public struct AssessmentImportResult: Codable, Sendable, Equatable {
    public var studyId: String
    /// The activity the assessment is, in the study's draft.
    public var activityId: String
    /// Whether the activity is new (201), or replaced one imported before (200).
    public var created: Bool
    /// Why the MyStudies apps cannot run it, located in the assessment; empty when they can.
    public var sageOnly: [ValidationProblem]
    /// What a runner accepts but probably not as meant (located in the assessment); then what the
    /// draft still lacks (located in the draft).
    public var warnings: [ValidationProblem]

    public init(studyId: String, activityId: String, created: Bool, sageOnly: [ValidationProblem], warnings: [ValidationProblem]) {
        self.studyId = studyId
        self.activityId = activityId
        self.created = created
        self.sageOnly = sageOnly
        self.warnings = warnings
    }
}
