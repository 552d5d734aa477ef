/// The reply of `POST /admin/v1/apps/{appId}/move-in/studies`: what moving the export's studies
/// in does (a dry run) or did.
public struct StudyMoveInReport: Codable, Sendable, Equatable {
    public var source: String
    public var readAt: String
    public var dryRun: Bool
    public var studies: [Study]

    public init(source: String, readAt: String, dryRun: Bool, studies: [Study]) {
        self.source = source
        self.readAt = readAt
        self.dryRun = dryRun
        self.studies = studies
    }

    public struct Study: Codable, Sendable, Equatable {
        public enum State: String, Codable, Sendable {
            /// Not here yet: the import creates it.
            case new
            /// Some of its versions are here (an import that stopped): the import goes on from there.
            case partly
            /// Every version is here as the source has it: the import changes nothing.
            case imported
            /// A study with this id is here and is not what the source has: the import leaves it.
            case differs
            /// Nothing of it can be imported (`findings` say why).
            case refused
        }

        public var studyId: String
        /// At the source: `Active`, `Upcoming`, `Paused` or `Closed`.
        public var sourceStatus: String
        /// Before this request.
        public var state: State
        /// The version labels the apps see, oldest first: the rebuilt history (`moved-1`, ...) and
        /// the current version last.
        public var versions: [String]
        /// How many of them are here, after this request.
        public var versionsHere: Int
        public var activities: [Activity]
        public var counts: MyStudiesStudyPlan.Counts
        public var findings: [MoveInFinding]

        public init(
            studyId: String, sourceStatus: String, state: State, versions: [String], versionsHere: Int,
            activities: [Activity], counts: MyStudiesStudyPlan.Counts, findings: [MoveInFinding]
        ) {
            self.studyId = studyId
            self.sourceStatus = sourceStatus
            self.state = state
            self.versions = versions
            self.versionsHere = versionsHere
            self.activities = activities
            self.counts = counts
            self.findings = findings
        }
    }

    /// One activity and the version labels of the designs that come over, oldest first.
    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        public var versions: [String]

        public init(activityId: String, versions: [String]) {
            self.activityId = activityId
            self.versions = versions
        }
    }
}

extension StudyMoveInReport.Study {
    /// Where the study stands, in a team's words: the command and the console say it the same way.
    public func standing(dryRun: Bool) -> String {
        switch state {
        case .new: dryRun ? "new: will be created" : "created"
        case .partly: dryRun ? "partly here: the import goes on from version \(versionsHere + 1)" : "completed"
        case .imported: "already imported: nothing changes"
        case .differs: "a different study of this id is here: left as it is"
        case .refused: "cannot be imported"
        }
    }

    /// The counts in one sentence.
    public var countsSentence: String {
        "\(counts.activities) activities, \(counts.activityVersions) designs, \(counts.steps) steps, "
            + "\(counts.eligibilityQuestions) eligibility questions, \(counts.consentSections) consent sections, "
            + "\(counts.comprehensionQuestions) comprehension questions, \(counts.resources) resources, "
            + "\(counts.participantProperties) participant properties; \(counts.notImported) not imported"
    }
}

extension MoveInFinding.Effect {
    /// The findings of this effect, as a report heads them; in the order a team reads them.
    public static let reportOrder: [MoveInFinding.Effect] = [.notImported, .changed, .note]

    public var heading: String {
        switch self {
        case .notImported: "not imported"
        case .changed: "changed"
        case .note: "to check"
        }
    }
}
