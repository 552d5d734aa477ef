import Foundation
import ServiceKit
import StudyModels

/// A schema app protocol into a study's draft (docs/schema-protocols.md): its modules become the
/// draft's activities, schedules, arms and graphs, by the draft editor's rules (`DraftEditing`).
/// An existing study's draft takes the protocol's content; a new study is created from it.
package struct SchemaProtocolImports: Sendable {
    /// Where a study that does not exist yet is created.
    package struct NewStudy: Sendable {
        /// The app the study belongs to; nil when the request named none.
        package var appId: String?
        /// The time zone its schedules are computed in.
        package var timeZone: String

        package init(appId: String?, timeZone: String) {
            self.appId = appId
            self.timeZone = timeZone
        }
    }

    package let editing: DraftEditing

    package init(editing: DraftEditing) {
        self.editing = editing
    }

    /// Imports `protocolBytes` into the study `access` is for. `assignment`: how participants are given arms, if
    /// the request chose; a re-import keeps the study's earlier choice otherwise, and a new study
    /// assigns in blocks.
    package func importProtocol(
        _ protocolBytes: some Collection<UInt8>, into access: DraftEditing.Access, assignment: SchemaConditions.Method?,
        newStudy: NewStudy
    ) async throws -> SchemaImportResult {
        let (studyId, admin) = (access.studyId, access.admin)
        let reading = SchemaImport.read(protocolBytes, assignment: assignment ?? .block)
        guard reading.errors.isEmpty else { throw StudyMetadataError.invalid(reading.errors, subject: .schemaProtocol) }
        let activities = reading.activities.map(\.activityId)
        if access.studyExists {
            let (warnings, arms) = try await editing.edit(
                studyId: studyId, by: admin, action: "study.schema_imported",
                details: ["protocolStudyId": reading.protocolStudyId ?? ""], madeFrom: "protocol"
            ) { draft in
                var imported = reading
                if assignment == nil, let previous = draft.arms?.assignment { imported.arms?.assignment = previous }
                imported.apply(to: &draft)
                return draft.arms
            }
            return SchemaImportResult(
                studyId: studyId, created: false, activities: activities, arms: arms, warnings: reading.warnings + warnings)
        }

        // What the request must say of a study that does not exist yet, located in its query.
        var problems: [ValidationProblem] = []
        if !Identifiers.isValid(studyId) {
            problems.append(ValidationProblem(pointer: "", message: "the study id in the path: \(Identifiers.rule)"))
        }
        if TimeZone(identifier: newStudy.timeZone) == nil {
            problems.append(ValidationProblem(pointer: "", message: "timeZone in the query: \"\(newStudy.timeZone)\" is not an IANA time zone"))
        }
        guard let appId = newStudy.appId, !appId.isEmpty else {
            throw StudyMetadataError.invalid(
                problems + [ValidationProblem(pointer: "", message: "appId in the query: the app the new study \(studyId) belongs to")],
                subject: .draftMadeFrom("protocol"))
        }
        var document = StudyDocument(
            studyId: studyId, appId: appId, name: LocalizedText(reading.name ?? studyId), timeZone: newStudy.timeZone)
        reading.apply(to: &document)
        let warnings = try await editing.create(document, madeFrom: "protocol", problems: problems, by: admin)
        return SchemaImportResult(
            studyId: studyId, created: true, activities: activities, arms: document.arms, warnings: reading.warnings + warnings)
    }
}
