import Foundation
import InternalContracts
import JSONText
import Logging
import ServiceKit
import StudyModels

/// Asks study-metadata about a study a participant names. Registration keeps no copy of the
/// studies: the calls that need one (a consent upload) are rare, and a copy would be one more
/// thing to keep in step.
///
/// Many requests about one study arrive together (a team's pages of its participants), so the
/// same question is shared (`SharedQuestions`): who asks while it is being asked waits for the
/// next asking, which begins after they asked, so no answer is older than asking alone gives.
/// A study id is a key by its scalars (`ScalarKey`): a `String` key would merge canonically
/// equivalent ids, and one study's answer would go to a request about another.
package struct StudyDirectory: Sendable {
    package let client: InternalClient
    private let standings: SharedQuestions<ScalarKey, StudyStanding?>
    private let schedules: SharedQuestions<ScalarKey, StudySchedule?>

    package init(client: InternalClient) {
        self.client = client
        standings = SharedQuestions { studyId, logger in
            try await Self.get(InternalCalls.standing, studyId: studyId.text, asking: "a study check", client: client, logger: logger)
        }
        schedules = SharedQuestions { studyId, logger in
            try await Self.get(InternalCalls.schedule, studyId: studyId.text, asking: "a study's schedule", client: client, logger: logger)
        }
    }

    package struct Unavailable: Error {
        package init() {}
    }

    /// The published study's app and status; nil when study-metadata has no published study by
    /// that id. Throws `Unavailable` when study-metadata cannot say.
    package func standing(of studyId: String, logger: Logger) async throws -> StudyStanding? {
        try await standings.answer(ScalarKey(studyId), logger: logger)
    }

    /// What the study schedules at its newest published version (`StudySchedule`); nil when
    /// study-metadata has none published by that id. Throws `Unavailable` when it cannot say.
    package func schedule(of studyId: String, logger: Logger) async throws -> StudySchedule? {
        try await schedules.answer(ScalarKey(studyId), logger: logger)
    }

    /// One signed GET to study-metadata: its reply, nil when it has no published study by that id,
    /// `Unavailable` when it cannot be reached or answers otherwise.
    private static func get<Reply>(
        _ endpoint: InternalEndpoint<NoContent, Reply>, studyId: String, asking what: String, client: InternalClient, logger: Logger
    ) async throws -> Reply? {
        do {
            switch try await client.call(endpoint, ["studyId": studyId], logger: logger) {
            case .answered(let reply): return reply
            case .refused: return nil
            }
        } catch {
            logger.warning("study-metadata could not answer \(what)", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
    }
}

/// The schedules one round of a sweep reads: each study asked of study-metadata once a round,
/// and a study whose answer did not come not asked again that round (its items wait for a later
/// one rather than each waiting out a timeout).
package struct RoundSchedules {
    package enum Lookup {
        case published(StudySchedule)
        /// Study-metadata has no published study of that id.
        case notPublished
        /// Study-metadata did not answer.
        case unreachable
    }

    let studies: any StudySchedules
    let logger: Logger
    private var known: [String: StudySchedule?] = [:]
    private var unreachable: Set<String> = []

    package init(studies: any StudySchedules, logger: Logger) {
        self.studies = studies
        self.logger = logger
    }

    /// Each of a round's `items` with its study's schedule (nil: none published), in order. Those
    /// whose study-metadata did not answer are left out: their leases end, and a later round
    /// takes them, rather than each waiting out a timeout.
    package static func scheduled<Item>(
        _ items: [Item], studyId: (Item) -> String, studies: any StudySchedules, logger: Logger
    ) async throws -> [(Item, StudySchedule?)] {
        var schedules = RoundSchedules(studies: studies, logger: logger)
        var paired: [(Item, StudySchedule?)] = []
        for item in items {
            switch try await schedules.lookup(studyId(item)) {
            case .published(let found): paired.append((item, found))
            case .notPublished: paired.append((item, nil))
            case .unreachable: continue
            }
        }
        return paired
    }

    package mutating func lookup(_ studyId: String) async throws -> Lookup {
        if unreachable.contains(studyId) { return .unreachable }
        if let found = known[studyId] { return found.map(Lookup.published) ?? .notPublished }
        do {
            let found = try await studies.schedule(of: studyId, logger: logger)
            known[studyId] = .some(found)
            return found.map(Lookup.published) ?? .notPublished
        } catch is StudyDirectory.Unavailable {
            unreachable.insert(studyId)
            return .unreachable
        }
    }
}
