import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import NIOCore
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's consents over its life: who still owes a signature after a consent change that
/// asked those who signed to sign again, the reminders a study admin sends them, and the consent
/// history as CSV (docs/admin-api.md, Consent changes).
package struct AdminConsentRoutes: Sendable {
    package let reminders: ConsentReminders
    package let consents: ConsentStore
    package let audit: AuditLog

    package init(reminders: ConsentReminders, consents: ConsentStore, audit: AuditLog) {
        self.reminders = reminders
        self.consents = consents
        self.audit = audit
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.consentReminders, use: summary)
        routes.on(AdminCalls.remindConsent, use: remind)
        routes.on(AdminCalls.consentHistory, use: history)
    }

    @Sendable package func summary(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ConsentReminderSummary {
        try await reminders.summary(studyId: try context.parameters.decoded("studyId"))
    }

    @Sendable package func remind(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ConsentReminderSummary {
        let studyId = try context.parameters.decoded("studyId")
        let body = try await request.body.collect(upTo: 16 * 1024)
        let wanted: ConsentReminderRequest
        if body.readableBytes == 0 {
            wanted = ConsentReminderRequest()
        } else {
            guard let decoded = try? JSONDecoder().decode(ConsentReminderRequest.self, from: Data(buffer: body)) else {
                throw APIError.badRequest("the body is {\"quietFrom\": \"21:00\", \"quietUntil\": \"08:00\", \"message\": \"...\"}, each optional")
            }
            wanted = decoded
        }
        return try await reminders.request(wanted, studyId: studyId, by: admin.email)
    }

    /// The CSV, streamed a page of records at a time; reading it is audited.
    @Sendable package func history(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        try await audit.record(actor: admin.email, action: "consent.history_exported", studyId: studyId, details: [:])
        let consents = self.consents
        // The study id as a file name keeps letters, digits, `_` and `-` only.
        let safeName = String(String.UnicodeScalarView(studyId.unicodeScalars.filter {
            $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" || $0 == "-")
        }))
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8",
                .contentDisposition: "attachment; filename=\"\(safeName)-consent-history.csv\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(bytes: CSV.line(ConsentStore.historyColumns)))
                try await consents.forEachHistoryPage(studyId: studyId) { page in
                    var bytes: [UInt8] = []
                    for row in page { bytes += CSV.line(row) }
                    try await writer.write(ByteBuffer(bytes: bytes))
                }
                try await writer.finish(nil)
            })
    }
}

extension ConsentReminderSummary: ResponseEncodable {}
