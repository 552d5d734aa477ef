import Foundation
import InMemoryPorts
import ResponseCore
import StudyModels
import Testing

/// What becomes of a schema app POST, decided by `SchemaPosts` without a database: which studies
/// take it, which road it takes (the shared ingest statement, or the participant's own
/// transaction), and that what is refused stores nothing.
@Suite struct SchemaPostRulesTests {
    static let studyKey = "3ZDOGAH"

    static func study(status: StudyEvent.Status = .active, collecting: Bool = true, schema: Bool = true) -> SchemaStudy {
        let event = StudyEvent(
            studyId: studyKey, appId: "APP", orgId: "ORG", status: status, version: 1, label: "1.0", consentVersion: 1,
            activities: [], participantProperties: [], action: nil, at: Date(timeIntervalSince1970: 0),
            source: schema ? StudySource(format: .schema, document: .object(["modules": .array([])])) : nil)
        return SchemaStudy(event: event, collecting: collecting, plan: SchemaReception.Study(event))
    }

    static func log(user: String = "ABD2345Z", page: String = "home", event: String = "entry", at: String = "1712356800000")
        throws -> SchemaSubmission
    {
        try SchemaSubmission.parse([
            ("data_type", "log"), ("user_id", user), ("study_id", studyKey), ("module_index", "-1"), ("page", page),
            ("event", event), ("timestamp", "2024-04-06T09:40:00+11:00"), ("timestamp_in_ms", at), ("platform", "android"),
        ])
    }

    static func posts(_ study: SchemaStudy? = study()) -> (SchemaPosts, InMemorySchemaArrivals) {
        let arrivals = InMemorySchemaArrivals()
        if let study { arrivals.add(study, key: studyKey) }
        return (SchemaPosts(studies: arrivals, arrivals: arrivals), arrivals)
    }

    @Test func aFirstPostMakesTheParticipantAndTheNextGoesThroughTheSharedStatement() async throws {
        let (posts, arrivals) = Self.posts()
        let first = try await posts.receive(try Self.log(), studyId: Self.studyKey.lowercased())
        #expect(first == .stored(new: true, participantId: 1))
        #expect(arrivals.counts == (ingested: 1, enrolling: 1))
        let second = try await posts.receive(try Self.log(at: "1712356860000"), studyId: Self.studyKey)
        #expect(second == .stored(new: true, participantId: 1))
        #expect(arrivals.counts == (ingested: 2, enrolling: 1))
        // A replay is recognised by its key and stores nothing more.
        #expect(try await posts.receive(try Self.log(at: "1712356860000"), studyId: Self.studyKey) == .stored(new: false, participantId: 1))
        #expect(arrivals.stored == 2)
    }

    @Test func aLogThatChangesTheStatusTakesTheParticipantsTransactionAndIsFollowedOnce() async throws {
        let (posts, arrivals) = Self.posts()
        _ = try await posts.receive(try Self.log(), studyId: Self.studyKey)
        let withdrawal = try Self.log(page: "settings", event: "withdraw", at: "1712356900000")
        #expect(try await posts.receive(withdrawal, studyId: Self.studyKey) == .stored(new: true, participantId: 1))
        #expect(arrivals.counts.enrolling == 2)
        #expect(arrivals.participant(studyKey: Self.studyKey, externalId: "ABD2345Z")?.status == .withdrawn)
        // Their next POST is still kept: the schema app withdraws and rejoins by its logs.
        #expect(try await posts.receive(try Self.log(at: "1712357000000"), studyId: Self.studyKey) == .stored(new: true, participantId: 1))
        let rejoining = try Self.log(page: "home", event: "enrol", at: "1712357100000")
        #expect(try await posts.receive(rejoining, studyId: Self.studyKey) == .stored(new: true, participantId: 1))
        #expect(arrivals.participant(studyKey: Self.studyKey, externalId: "ABD2345Z")?.status == .enrolled)
        #expect(SchemaPosts.status(after: try Self.log(page: "settings", event: "entry")) == nil)
    }

    @Test func onlyALaunchedCollectingSchemaStudyTakesPostsAndARefusalStoresNothing() async throws {
        for (study, expected) in [
            (nil, SchemaPosts.Outcome.unknownStudy),
            (Self.study(schema: false), .unknownStudy),
            (Self.study(status: .testing), .unknownStudy),
            (Self.study(status: .paused), .notCollecting),
            (Self.study(collecting: false), .notCollecting),
        ] as [(SchemaStudy?, SchemaPosts.Outcome)] {
            let (posts, arrivals) = Self.posts(study)
            #expect(try await posts.receive(try Self.log(), studyId: Self.studyKey) == expected)
            #expect(arrivals.stored == 0)
        }
        let (posts, arrivals) = Self.posts()
        let elsewhere = try SchemaSubmission.parse([
            ("data_type", "log"), ("user_id", "ABD2345Z"), ("study_id", "OTHER"), ("module_index", "-1"), ("page", "home"),
            ("event", "entry"), ("timestamp", "2024-04-06T09:40:00+11:00"), ("timestamp_in_ms", "1712356800000"),
            ("platform", "android"),
        ])
        guard case .refused(let problem) = try await posts.receive(elsewhere, studyId: Self.studyKey) else {
            Issue.record("a POST for another study was not refused")
            return
        }
        #expect(problem.field == "study_id")
        #expect(arrivals.stored == 0)
        #expect(arrivals.counts == (ingested: 0, enrolling: 0))
    }
}
