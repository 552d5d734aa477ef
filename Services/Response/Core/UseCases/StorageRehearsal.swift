import Foundation
import JSONText
import Logging
import PostgresNIO
import StudyModels

/// Whether a study's tables can hold a response to each of its activities, found before the
/// study goes out (docs/response-api.md, Storage rehearsal). Study-metadata asks it before it
/// freezes a version (publishing for testing, launch, publishing updates) and for the console's
/// check-list. Each design goes through the code real responses go through: the design derived
/// (`SurveySchema`), applied to the study's tables (`StudyTables`), a response that answers every
/// step (`SyntheticResponse`) read and planned (`ResponseProcessor.plan`) and written
/// (`ResponseWriter`), in one transaction that is always rolled back: nothing of it stays, and
/// the study's table changes wait for it (it holds the study's table lock while it runs).
package struct StorageRehearsal: Sendable {
    package let client: PostgresClient
    package let tables: StudyTables
    package let writer: ResponseWriter
    package let staging: RehearsalStore
    package let logger: Logger

    package init(client: PostgresClient, tables: StudyTables, writer: ResponseWriter, logger: Logger) {
        self.client = client
        self.tables = tables
        self.writer = writer
        staging = RehearsalStore(logger: logger)
        self.logger = logger
    }

    /// Ends the transaction in a rollback, carrying what it found.
    private struct RolledBack: Error {
        var problems: [StorageProblem]
    }

    /// What keeps a response to each design from being stored: nothing when every one was.
    /// `designs` are the activities as study-metadata serves them to this service
    /// (`ActivityReply`'s JSON).
    package func problems(studyId: String, designs: [JSONValue]) async throws -> [StorageProblem] {
        let studyKey = StudyCatalog.key(studyId)
        let started = ContinuousClock.now
        defer {
            logger.info(
                "storage rehearsed",
                metadata: ["study": "\(studyKey)", "designs": "\(designs.count)", "duration": "\(ContinuousClock.now - started)"])
        }
        do {
            try await client.withTransaction(logger: logger) { connection in
                var problems: [StorageProblem] = []
                for design in designs {
                    let activityId = design["activity"]?["metadata"]?["activityId"]?.text ?? ""
                    try await staging.begin(on: connection)
                    do {
                        try await rehearse(design, activityId: activityId, studyKey: studyKey, studyId: studyId, on: connection)
                    } catch let refusal as SurveySchema.DesignError {
                        problems.append(StorageProblem(activityId: activityId, stepKey: refusal.stepKey, message: refusal.description))
                    } catch let refusal where ResponseProcessor.isRejection(refusal) {
                        problems.append(StorageProblem(
                            activityId: activityId, stepKey: nil, message: ResponseProcessor.message(refusal)))
                    }
                    // Each design on the tables as they are, not as the one before left them.
                    try await staging.undo(on: connection)
                }
                throw RolledBack(problems: problems)
            }
        } catch let error as PostgresTransactionError {
            if let rolledBack = error.closureError as? RolledBack { return rolledBack.problems }
            throw error
        }
        return []
    }

    /// One design through processing, on the rehearsal's connection; throws what refuses it.
    private func rehearse(
        _ design: JSONValue, activityId: String, studyKey: String, studyId: String, on connection: PostgresConnection
    ) async throws {
        let schema = try SurveySchema.derive(fromDesign: design)
        try await staging.ensureStudy(studyKey: studyKey, studyId: studyId, on: connection)
        try await tables.apply(schema, studyKey: studyKey, on: connection)
        // An activity imported from a Sage assessment stores its answers by the assessment's
        // paths (`SageAnswers`), from Sage's archives as from the MyStudies apps.
        let data: JSONValue
        var listed: SageAnswers.ChoiceValues?
        if case .object? = design["assessment"], let assessment = design["assessment"] {
            data = SyntheticResponse.data(forAssessment: assessment)
            listed = SageAnswers.choiceValues(assessment: assessment)
        } else {
            guard let answers = SyntheticResponse.data(forDesign: design) else { throw SurveySchema.DesignError.incomplete }
            data = answers
        }
        let text = data.serialized()
        let (participantId, participantNumber, responseId) = try await staging.stage(
            studyKey: studyKey, activityId: schema.activityId, data: text, on: connection)
        let (schemaName, lists) = try await tables.lists(studyKey: studyKey, on: connection)
        let plan = ResponseProcessor.plan(
            [
                .init(
                    id: responseId, participantId: participantId, participantNumber: participantNumber, studyKey: studyKey, studyId: studyId,
                    activityId: schema.activityId, data: text)
            ],
            schema: schemaName, lists: lists, listed: listed.map { [responseId: $0] } ?? [:])
        if let message = plan.refused[responseId] { throw ResponseShredder.Failure(description: message) }
        guard let schemaName else { throw SurveySchema.DesignError.incomplete }
        try await writer.insert(plan.planned, schema: schemaName, on: connection)
    }
}
