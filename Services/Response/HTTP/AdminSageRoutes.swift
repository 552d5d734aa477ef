import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import NIOCore
import ResponseCore
import SageAssessments
import ServiceKit
import ServiceKitHTTP
import StudyModels
import ZipArchive

/// A study's Sage side for its team (docs/sage.md): the certificate the app build seals archives
/// for (viewers; made on first use), the archives received (listed to viewers, downloaded by
/// editors, as the study's exports are; each download audited), and the archives refused for
/// their content, kept as they arrived (listed to viewers; downloaded and reprocessed by editors).
package struct AdminSageRoutes {
    package let archives: SageArchiveStore
    /// The refused archives, listed and downloaded as they were kept.
    package let refusals: SageRefusalStore
    /// Reprocesses a refused archive.
    package let intake: SageArchiveIntake
    package let audit: AuditLog

    package init(
        archives: SageArchiveStore, refusals: SageRefusalStore,
        intake: SageArchiveIntake, audit: AuditLog
    ) {
        self.archives = archives
        self.refusals = refusals
        self.intake = intake
        self.audit = audit
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.sageCertificate, use: certificate)
        routes.on(AdminCalls.sageArchives, use: list)
        routes.on(AdminCalls.sageArchive, use: download)
        routes.on(AdminCalls.sageArchiveFile, use: file)
        routes.on(AdminCalls.refusedSageArchives, use: listRefused)
        routes.on(AdminCalls.refusedSageArchive, use: downloadRefused)
        routes.on(AdminCalls.reprocessRefusedSageArchive, use: reprocess)
    }

    @Sendable package func certificate(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        let pair = try await archives.ensureKeyPair(studyKey: study.key, studyId: study.studyId, actor: admin.email)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/x-pem-file",
                .contentDisposition: "attachment; filename=\"\(study.key)-sage.pem\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: pair.certificatePEM)))
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> SageArchiveList {
        let query = request.uri.queryParameters
        let (limit, before) = try Self.page(request)
        let participant = try query["participant"].map(ParticipantQuery.participantNumber)
        return try await archives.list(studyKey: study.key, participantNumber: participant, before: before, limit: limit)
    }

    /// `limit` (1 to 500, 50 by default) and `before` (a page's `nextBefore`).
    private static func page(_ request: Request) throws -> (limit: Int, before: Int64?) {
        let query = request.uri.queryParameters
        guard let limit = query["limit"].map({ Int(String($0)) }) ?? 50, (1...500).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 500", field: "limit")
        }
        var before: Int64?
        if let text = query["before"] {
            guard let number = Int64(String(text)), number > 0 else {
                throw APIError.badRequest("before must be the nextBefore of a page", field: "before")
            }
            before = number
        }
        return (limit, before)
    }

    /// The archives refused for their content, newest first, with why (viewer).
    @Sendable package func listRefused(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> SageRefusedArchiveList {
        let (limit, before) = try Self.page(request)
        return try await refusals.list(studyKey: study.key, before: before, limit: limit)
    }

    /// A refused archive's bytes as they arrived (editor; audited).
    @Sendable package func downloadRefused(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        let refusalId = try refusalId(context, of: study)
        guard let bytes = try await refusals.content(studyKey: study.key, refusalId: refusalId) else {
            throw ResponseAdminError.noRefusedArchive(studyId: study.studyId, refusalId: refusalId.uuidString.lowercased())
        }
        try await audit.record(
            actor: admin.email, action: "sage.refused_archive_downloaded", studyId: study.key,
            details: ["refusalId": refusalId.uuidString.lowercased()])
        return Self.attachment(bytes, type: "application/octet-stream", name: "\(refusalId.uuidString.lowercased()).archive")
    }

    /// Reads a refused archive again with the study as it is published now, and stores it when it
    /// can be (editor): 200 with the archive, 422 with why it is refused still, 409 when its
    /// participant withdrew or the study is not collecting.
    @Sendable package func reprocess(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> SageReprocessed {
        let refusalId = try refusalId(context, of: study)
        switch try await intake.reprocess(refusalId: refusalId, studyKey: study.key, actor: admin.email) {
        case nil:
            throw ResponseAdminError.noRefusedArchive(studyId: study.studyId, refusalId: refusalId.uuidString.lowercased())
        case .stored(let archiveId)?:
            return SageReprocessed(refusalId: refusalId.uuidString.lowercased(), archiveId: archiveId.uuidString.lowercased())
        case .refusedAgain(let reason, let problems)?:
            throw ResponseAdminError.refusedAgain(reason: reason, problems: problems)
        case .notAdmitted(let reason)?:
            throw ResponseAdminError.notAdmitted(reason)
        }
    }

    private func refusalId(_ context: ServiceRequestContext, of study: StudyCatalog.Study) throws -> UUID {
        let text = try context.parameters.decoded("refusalId")
        guard let id = UUID(uuidString: text) else { throw ResponseAdminError.noRefusedArchive(studyId: study.studyId, refusalId: text) }
        return id
    }

    /// The archive's ZIP, as it was opened.
    @Sendable package func download(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        let (archiveId, zip) = try await stored(study, context)
        try await audit.record(
            actor: admin.email, action: "sage.archive_downloaded", studyId: study.key,
            details: ["archiveId": archiveId.uuidString.lowercased()])
        return Self.attachment(zip, type: "application/zip", name: "\(archiveId.uuidString.lowercased()).zip")
    }

    /// One file of the archive (`?name=`).
    @Sendable package func file(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        let (archiveId, zip) = try await stored(study, context)
        guard let name = request.uri.queryParameters["name"].map(String.init), !name.isEmpty, name.utf8.count <= 255 else {
            throw APIError.badRequest("name must be the name of one of the archive's files", field: "name")
        }
        // Stored archives passed these limits when they came; read again with the same ones.
        guard let bytes = try? ZipArchive(zip, limits: ResultArchive.limits)[name] else {
            throw ResponseAdminError.noArchiveFile(archiveId: archiveId.uuidString.lowercased(), name: name)
        }
        try await audit.record(
            actor: admin.email, action: "sage.archive_downloaded", studyId: study.key,
            details: ["archiveId": archiveId.uuidString.lowercased(), "file": name])
        let type = name.hasSuffix(".json") ? "application/json" : "application/octet-stream"
        let base = name.split(separator: "/").last.map(String.init) ?? "file"
        return Self.attachment(bytes, type: type, name: base.filter { $0 != "\"" && $0 != "\\" })
    }

    /// The path's archive of `study`: its id and its ZIP as it was opened.
    private func stored(_ study: StudyCatalog.Study, _ context: ServiceRequestContext) async throws -> (UUID, [UInt8]) {
        let text = try context.parameters.decoded("archiveId")
        guard let archiveId = UUID(uuidString: text), let zip = try await archives.content(studyKey: study.key, archiveId: archiveId) else {
            throw ResponseAdminError.noArchive(studyId: study.studyId, archiveId: text)
        }
        return (archiveId, zip)
    }

    static func attachment(_ bytes: [UInt8], type: String, name: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .contentDisposition: "attachment; filename=\"\(name)\"", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension SageArchiveList: ResponseEncodable {}
extension SageRefusedArchiveList: ResponseEncodable {}
extension SageReprocessed: ResponseEncodable {}
