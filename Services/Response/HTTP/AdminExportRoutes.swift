import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import Logging
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's tables for its researchers (editors): every participant's rows, as CSV files in a
/// zip or as JSON lines, streamed. Each export is audited: it is all the study's health data.
package struct AdminExportRoutes {
    package let tables: StudyTables
    package let export: StudyExport
    package let audit: AuditLog

    package init(tables: StudyTables, export: StudyExport, audit: AuditLog) {
        self.tables = tables
        self.export = export
        self.audit = audit
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.exportZip) { _, context, admin, study in
            try await self.export(study, context, admin, format: .csvZip)
        }
        routes.on(AdminCalls.exportJSONLines) { _, context, admin, study in
            try await self.export(study, context, admin, format: .jsonLines)
        }
    }

    private func export(
        _ study: StudyCatalog.Study, _ context: ServiceRequestContext, _ admin: AdminIdentity, format: StudyExport.Format
    ) async throws -> Response {
        let lists = try await tables.catalog(studyKey: study.key) ?? .init(schema: "", tables: [:])
        let (type, suffix) = format == .csvZip ? ("application/zip", "zip") : ("application/x-ndjson; charset=utf-8", "jsonl")
        try await audit.record(
            actor: admin.email, action: "responses.exported", studyId: study.key,
            details: ["format": suffix, "tables": String(lists.order.count)])
        let export = self.export
        let studyKey = study.key
        let logger = context.logger
        return Response(
            status: .ok,
            headers: [
                .contentType: type,
                .contentDisposition: "attachment; filename=\"\(study.key)-responses.\(suffix)\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                do {
                    try await export.write(lists, studyKey: studyKey, as: format) { chunk in try await writer.write(chunk) }
                } catch {
                    Self.logEnded(early: error, logger: logger)
                    throw error
                }
                try await writer.finish(nil)
            })
    }

    /// How an export that ended early is logged. A researcher who cancels a download, or whose
    /// connection drops, is not the service failing: that is said at `info`, without an error an
    /// operator would be paged for (one per cancelled download). Any other end is an error: the
    /// status is already sent, so the download ends short (a zip without its directory), which
    /// clients report as damaged.
    package static func logEnded(early error: any Error, logger: Logger) {
        if error is CancellationError || StaleConnection.closedUnderRequest(error) {
            logger.info("export stopped: its client closed the connection")
        } else {
            logger.error("export failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
