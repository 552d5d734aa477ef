import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Enrollment-token batches and response collection, per study (admin API, study-metadata's
/// bearer tokens): viewers list batches; editors create them, download their tokens and turn
/// collection on or off.
package struct AdminTokenRoutes {
    package struct CollectionRequest: Decodable {
        package var enabled: Bool
    }

    package struct CollectionState: ResponseEncodable {
        package var studyId: String
        package var collectionEnabled: Bool
    }

    package let catalog: StudyCatalog
    package let tokens: TokenStore
    package let sheet: EnrollmentTokenSheet
    package let audit: AuditLog
    package let maxBatch: Int

    package init(
        catalog: StudyCatalog, tokens: TokenStore, audit: AuditLog,
        maxBatch: Int
    ) {
        self.catalog = catalog
        self.tokens = tokens
        self.sheet = EnrollmentTokenSheet(tokens: tokens)
        self.audit = audit
        self.maxBatch = maxBatch
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.createTokenBatch, use: create)
        routes.on(AdminCalls.tokenBatches, use: list)
        routes.on(AdminCalls.tokenBatchCSV, use: download)
        routes.on(AdminCalls.tokenBatchSheet, use: printableSheet)
        routes.on(AdminCalls.setCollection, use: setCollection)
    }

    @Sendable package func create(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> EditedResponse<TokenBatchCreated> {
        let body = try await request.body.collect(upTo: 4096)
        guard let wanted = try? JSONDecoder().decode(TokenBatchRequest.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be {\"count\": N}", field: "count")
        }
        guard (1...maxBatch).contains(wanted.count) else {
            throw APIError.badRequest("count must be 1 to \(maxBatch)", field: "count")
        }
        let batchId = try await tokens.createBatch(studyKey: study.key, count: wanted.count, createdBy: admin.email)
        return EditedResponse(status: .created, response: TokenBatchCreated(batchId: batchId, count: wanted.count))
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> TokenBatchList {
        return TokenBatchList(batches: try await tokens.batches(studyKey: study.key))
    }

    /// `token,used` lines, streamed page by page.
    @Sendable package func download(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        guard let batchId = UUID(uuidString: try context.parameters.decoded("batchId")),
            try await tokens.batch(batchId, studyKey: study.key) != nil
        else {
            throw ResponseAdminError.noTokenBatch(studyId: study.studyId)
        }
        try await audit.record(
            actor: admin.email, action: "tokens.batch_downloaded", studyId: study.key,
            details: ["batchId": batchId.uuidString.lowercased(), "format": "csv"])
        let tokens = self.tokens
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8",
                .contentDisposition: "attachment; filename=\"\(study.key)-\(batchId.uuidString.lowercased()).csv\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "token,used\n"))
                try await tokens.forEachToken(in: batchId) { page in
                    var text = ""
                    text.reserveCapacity(page.count * 16)
                    for token in page { text += "\(token.token),\(token.used)\n" }
                    try await writer.write(ByteBuffer(string: text))
                }
                try await writer.finish(nil)
            })
    }

    /// The printable sheet: a QR code per token, the token printed under it, streamed a page at a
    /// time. Editors only, like the CSV: it is the batch's tokens.
    @Sendable package func printableSheet(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        guard let batchId = UUID(uuidString: try context.parameters.decoded("batchId")),
            let batch = try await tokens.batch(batchId, studyKey: study.key)
        else {
            throw ResponseAdminError.noTokenBatch(studyId: study.studyId)
        }
        try await audit.record(
            actor: admin.email, action: "tokens.batch_downloaded", studyId: study.key,
            details: ["batchId": batchId.uuidString.lowercased(), "format": "qr.pdf"])
        let sheet = self.sheet
        let studyId = study.studyId
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/pdf",
                .contentDisposition: "attachment; filename=\"\(study.key)-\(batchId.uuidString.lowercased())-qr.pdf\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                try await sheet.write(batch: batch, studyId: studyId) { bytes in
                    try await writer.write(ByteBuffer(bytes: bytes))
                }
                try await writer.finish(nil)
            })
    }

    @Sendable package func setCollection(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> CollectionState {
        let body = try await request.body.collect(upTo: 4096)
        guard let wanted = try? JSONDecoder().decode(CollectionRequest.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("the body must be {\"enabled\": true|false}", field: "enabled")
        }
        _ = try await catalog.setCollection(study.studyId, enabled: wanted.enabled, actor: admin.email)
        return CollectionState(studyId: study.studyId, collectionEnabled: wanted.enabled)
    }
}

extension TokenStore.Batch: ResponseEncodable {}

extension TokenBatchCreated: ResponseEncodable {}
extension TokenBatchList: ResponseEncodable {}
