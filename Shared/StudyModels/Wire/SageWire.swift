import Foundation

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

/// One file of a Sage result archive.
public struct SageArchiveFile: Codable, Sendable, Equatable {
    public var name: String
    public var bytes: Int
    /// Whether the archive's `metadata.json` manifest names it.
    public var listed: Bool
    /// Neither named by the manifest nor one of the files an archive carries beside it
    /// (`metadata.json`, `info.json`, `answers_schema.json`): kept, but not what a client writes.
    public var unexpected: Bool

    public init(name: String, bytes: Int, listed: Bool, unexpected: Bool) {
        self.name = name
        self.bytes = bytes
        self.listed = listed
        self.unexpected = unexpected
    }
}

/// A Sage result archive as the response service lists it to a study's team.
public struct SageArchiveSummary: Codable, Sendable, Equatable {
    public var archiveId: String
    /// The participant's number in the study's tables (the `ParticipantId` column).
    public var participantId: Int64
    /// The activity its answers are filed under, and that activity's version.
    public var assessmentId: String
    public var activityVersion: String
    public var taskRunUUID: String?
    /// The ZIP's size as opened.
    public var bytes: Int
    /// Whether it came sealed for the study's certificate.
    public var sealed: Bool
    public var sha256: String
    public var files: [SageArchiveFile]
    public var receivedAt: Date
    /// Its response's processing status (`pending`, `processed`, `error`, `forwarded`) and error.
    public var status: String?
    public var error: String?

    public init(
        archiveId: String, participantId: Int64, assessmentId: String, activityVersion: String, taskRunUUID: String?, bytes: Int,
        sealed: Bool, sha256: String, files: [SageArchiveFile], receivedAt: Date, status: String?, error: String?
    ) {
        self.archiveId = archiveId
        self.participantId = participantId
        self.assessmentId = assessmentId
        self.activityVersion = activityVersion
        self.taskRunUUID = taskRunUUID
        self.bytes = bytes
        self.sealed = sealed
        self.sha256 = sha256
        self.files = files
        self.receivedAt = receivedAt
        self.status = status
        self.error = error
    }
}

/// `GET /admin/v1/studies/{studyId}/sage/archives`: newest first; `nextBefore` asks for the page
/// after this one.
public struct SageArchiveList: Codable, Sendable, Equatable {
    public var archives: [SageArchiveSummary]
    public var nextBefore: String?

    public init(archives: [SageArchiveSummary], nextBefore: String?) {
        self.archives = archives
        self.nextBefore = nextBefore
    }
}

/// `POST /sage/v1/studies/{studyId}/archives`: the archive stored (201), or stored before (200).
public struct SageArchiveReceipt: Codable, Sendable, Equatable {
    public var archiveId: String

    public init(archiveId: String) {
        self.archiveId = archiveId
    }
}
