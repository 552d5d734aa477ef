import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Survey designs, fetched from study-metadata over a signed call the first time a response of
/// that activity version arrives, kept for good, and applied to the study's tables once.
package struct DesignSource: Sendable {
    /// Study-metadata could not be asked: the response stays pending and is tried again.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) {
            self.description = description
        }
    }

    package let client: PostgresClient
    package let internalClient: InternalClient
    package let tables: StudyTables
    package let logger: Logger

    package init(client: PostgresClient, internalClient: InternalClient, tables: StudyTables, logger: Logger) {
        self.client = client
        self.internalClient = internalClient
        self.tables = tables
        self.logger = logger
    }

    /// Makes sure the study's tables hold the design of `activityId` at `version`.
    package func ensureApplied(studyKey: String, studyId: String, activityId: String, version: String) async throws {
        let rows = try await client.query(
            """
            SELECT design::text, applied_at IS NOT NULL FROM activity_designs
            WHERE study_key = \(studyKey) AND activity_id = \(activityId) AND version = \(version)
            """, logger: logger)
        var stored: (String, Bool)?
        for try await row in rows.decode((String, Bool).self) { stored = row }
        if let (_, applied) = stored, applied { return }
        let design: Data =
            if let (text, _) = stored { Data(text.utf8) } else {
                try await fetch(studyKey: studyKey, studyId: studyId, activityId: activityId, version: version)
            }
        let schema = try SurveySchema.derive(fromDesign: design)
        try await tables.apply(schema, studyKey: studyKey)
        try await client.query(
            """
            UPDATE activity_designs SET applied_at = now()
            WHERE study_key = \(studyKey) AND activity_id = \(activityId) AND version = \(version)
            """, logger: logger)
    }

    /// The choice values a design imported from a Sage assessment lists (`SageAnswers.ChoiceValues`),
    /// nil for a design of the study builder; asked once the design is kept.
    package func sageChoices(studyKey: String, activityId: String, version: String) async throws -> SageAnswers.ChoiceValues? {
        let rows = try await client.query(
            """
            SELECT (design -> 'assessment')::text FROM activity_designs
            WHERE study_key = \(studyKey) AND activity_id = \(activityId) AND version = \(version)
            """, logger: logger)
        var assessment: String?
        for try await text in rows.decode(String?.self) { assessment = text }
        guard let assessment, let document = try? JSONValue.parse(Data(assessment.utf8), budget: .activityDocument) else { return nil }
        return SageAnswers.choiceValues(assessment: document)
    }

    /// The design of `activityId` at `version` as study-metadata served it: the kept one, else
    /// fetched and kept (a version's design never changes).
    package func design(studyKey: String, studyId: String, activityId: String, version: String) async throws -> ActivityReply {
        let rows = try await client.query(
            """
            SELECT design::text FROM activity_designs
            WHERE study_key = \(studyKey) AND activity_id = \(activityId) AND version = \(version)
            """, logger: logger)
        var kept: String?
        for try await text in rows.decode(String.self) { kept = text }
        let design: Data =
            if let kept { Data(kept.utf8) } else {
                try await fetch(studyKey: studyKey, studyId: studyId, activityId: activityId, version: version)
            }
        do {
            return try InternalCoding.decoder.decode(ActivityReply.self, from: design)
        } catch {
            throw SurveySchema.DesignError.unparsable
        }
    }

    /// Every published version of the study and the activity versions each held; nil when
    /// study-metadata has none.
    package func versionHistory(studyId: String) async throws -> StudyVersionHistory? {
        let answer: InternalAnswer<StudyVersionHistory>
        do {
            answer = try await internalClient.call(InternalCalls.versions, ["studyId": studyId], logger: logger)
        } catch {
            if !Task.isCancelled { logger.warning("a study's versions could not be read", metadata: ["error": "\(error)"]) }
            throw Unavailable(description: "The versions of study \(studyId) cannot be read now")
        }
        switch answer {
        case .answered(let history): return history
        case .refused(let refusal, _) where refusal.status == 404: return nil
        case .refused(let refusal, _): throw Unavailable(description: "The versions of study \(studyId) could not be read (status \(refusal.status))")
        }
    }

    private func fetch(studyKey: String, studyId: String, activityId: String, version: String) async throws -> Data {
        if activityId == SchemaLogDesign.activityId, version == SchemaLogDesign.version {
            return try await keep(SchemaLogDesign.design, studyKey: studyKey, activityId: activityId, version: version)
        }
        let endpoint = InternalCalls.activity
        let parameters = ["studyId": studyId, "activityId": activityId, "version": version]
        // The reason kept with a waiting response is read by researchers (the admin API, the
        // console): the internal address asked and the transport's error go to the log only.
        let waiting = "The design of activity '\(activityId)' at version '\(version)' cannot be read now"
        let answer: InternalAnswer<ActivityReply>
        do {
            answer = try await internalClient.call(endpoint, parameters, logger: logger)
        } catch {
            // A shutdown cancels the call in flight: study-metadata did nothing wrong, and the
            // response waits for the next replica's round as it would for any unreadable design.
            if !Task.isCancelled {
                logger.warning(
                    "a design could not be fetched", metadata: ["path": "\((try? endpoint.path(parameters)) ?? "")", "error": "\(error)"])
            }
            throw Unavailable(description: waiting)
        }
        let reply: ActivityReply
        switch answer {
        case .answered(let answered): reply = answered
        case .refused(let refusal, _):
            // Said without the internal address asked: researchers read this on the console.
            throw SurveySchema.DesignError(
                description: refusal.status == 404
                    ? "No published design of activity '\(activityId)' at version '\(version)' in study \(studyId)"
                    : "The design of activity '\(activityId)' at version '\(version)' could not be read (status \(refusal.status))")
        }
        let design = try InternalCoding.encoder.encode(reply)
        guard (try? JSONValue.parse(design, budget: .activityDocument)) != nil else { throw SurveySchema.DesignError.unparsable }
        return try await keep(design, studyKey: studyKey, activityId: activityId, version: version)
    }

    /// Stores a design for good: a version's design never changes.
    private func keep(_ design: Data, studyKey: String, activityId: String, version: String) async throws -> Data {
        try await client.query(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES (\(studyKey), \(activityId), \(version), \(String(decoding: design, as: UTF8.self))::jsonb)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        return design
    }
}
