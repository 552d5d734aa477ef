import Foundation
import JSONText

/// Why a response to one activity could not be stored: the processing's own words.
public struct StorageProblem: Codable, Sendable, Equatable {
    public var activityId: String
    /// The step at fault, where the problem is one step's.
    public var stepKey: String?
    public var message: String

    public init(activityId: String, stepKey: String?, message: String) {
        self.activityId = activityId
        self.stepKey = stepKey
        self.message = message
    }
}

/// The response service's answer: no problems when a response to every activity was stored.
public struct StorageRehearsalReply: Codable, Sendable, Equatable {
    public var problems: [StorageProblem]

    public init(problems: [StorageProblem]) {
        self.problems = problems
    }
}

/// `GET /admin/v1/studies/{studyId}/storage-check`: what keeps the draft's answers from being
/// stored, each problem at its step in the study document.
public struct StorageCheckReply: Codable, Sendable, Equatable {
    public var problems: [ValidationProblem]

    public init(problems: [ValidationProblem]) {
        self.problems = problems
    }
}
