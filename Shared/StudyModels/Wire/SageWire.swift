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

/// A Sage result archive refused for its content and kept as it arrived (docs/sage.md, Refused
/// archives): why, how often the same bytes were refused, and the archive a reprocessing stored
/// it as, once one did.
public struct SageRefusedArchive: Codable, Sendable, Equatable {
    public var refusalId: String
    /// The participant's number in the study's tables (the `ParticipantId` column).
    public var participantId: Int64
    /// `archives` (the POST door) or `upload` (Bridge's handshake).
    public var door: String
    /// The body's size and SHA-256 as it arrived (sealed, if it came sealed).
    public var bytes: Int
    public var sha256: String
    public var receivedAt: Date
    public var lastRefusedAt: Date
    /// Each time the same bytes were refused (sent again, or reprocessed).
    public var timesRefused: Int
    /// Why, in one sentence, and each problem with where it is.
    public var reason: String
    public var problems: [ValidationProblem]
    public var archiveId: String?
    public var reprocessedAt: Date?

    public init(
        refusalId: String, participantId: Int64, door: String, bytes: Int, sha256: String, receivedAt: Date, lastRefusedAt: Date,
        timesRefused: Int, reason: String, problems: [ValidationProblem], archiveId: String?, reprocessedAt: Date?
    ) {
        self.refusalId = refusalId
        self.participantId = participantId
        self.door = door
        self.bytes = bytes
        self.sha256 = sha256
        self.receivedAt = receivedAt
        self.lastRefusedAt = lastRefusedAt
        self.timesRefused = timesRefused
        self.reason = reason
        self.problems = problems
        self.archiveId = archiveId
        self.reprocessedAt = reprocessedAt
    }
}

/// `GET /admin/v1/studies/{studyId}/sage/refused`: newest first; `nextBefore` asks for the page
/// after this one.
public struct SageRefusedArchiveList: Codable, Sendable, Equatable {
    public var refused: [SageRefusedArchive]
    public var nextBefore: String?

    public init(refused: [SageRefusedArchive], nextBefore: String?) {
        self.refused = refused
        self.nextBefore = nextBefore
    }
}

/// `POST /admin/v1/studies/{studyId}/sage/refused/{refusalId}/reprocess`: the archive a kept
/// refusal became.
public struct SageReprocessed: Codable, Sendable, Equatable {
    public var refusalId: String
    public var archiveId: String

    public init(refusalId: String, archiveId: String) {
        self.refusalId = refusalId
        self.archiveId = archiveId
    }
}

/// `POST /sage/v1/studies/{studyId}/archives`: the archive stored (201), or stored before (200).
public struct SageArchiveReceipt: Codable, Sendable, Equatable {
    public var archiveId: String

    public init(archiveId: String) {
        self.archiveId = archiveId
    }
}
