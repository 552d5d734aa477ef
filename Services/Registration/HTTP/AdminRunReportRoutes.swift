import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's adherence from its participants' kept standings (viewer; docs/schedules.md, Kept
/// standings): `GET /admin/v1/studies/{studyId}/runs/weeks` (runs per activity and week),
/// `GET .../runs/behind` (who is behind right now) and
/// `GET .../participants/{participantId}/runs/weeks` (one participant's weekly report).
package struct AdminRunReportRoutes: Sendable {
    package let reports: RunReportStore
    package let now: @Sendable () -> Date

    package init(reports: RunReportStore, now: @escaping @Sendable () -> Date = Date.init) {
        self.reports = reports
        self.now = now
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.studyRunWeeks, use: studyWeeks)
        routes.on(AdminCalls.participantsBehind, use: behind)
        routes.on(AdminCalls.participantRunWeeks, use: participantWeeks)
    }

    /// Without `from`, the study's weeks start eleven weeks before this one (twelve in all).
    static let defaultWeeks = 12
    /// The most weeks one request covers: two years.
    static let mostWeeks = 105

    @Sendable package func studyWeeks(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> StudyRunWeeks {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        let today = Int((now().timeIntervalSince1970 / 86_400).rounded(.down))
        let to = try Self.monday(parameters["to"], name: "to") ?? RunTally.monday(of: today)
        let from = try Self.monday(parameters["from"], name: "from") ?? to - 7 * (Self.defaultWeeks - 1)
        guard from <= to else { throw APIError.badRequest("from must not be after to", field: "from") }
        guard (to - from) / 7 < Self.mostWeeks else {
            throw APIError.badRequest("from and to may be at most \(Self.mostWeeks) weeks apart", field: "from")
        }
        return try await reports.studyWeeks(studyId: studyId, mondays: from...to)
    }

    /// The most entries one page of `behind` holds.
    static let mostBehind = 500

    @Sendable package func behind(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantsBehind {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        let limit = try Self.number(parameters["limit"], name: "limit", in: 1...Self.mostBehind) ?? 100
        let atLeast = try Self.number(parameters["atLeast"], name: "atLeast", in: 1...10_000) ?? 1
        let activityId = parameters["activityId"].map(String.init)
        if let activityId, activityId.unicodeScalars.count > 100 {
            throw APIError.badRequest("activityId is at most 100 characters", field: "activityId")
        }
        let cursor = try parameters["after"].map { text in
            guard let cursor = Self.cursor(text) else {
                throw APIError.badRequest("after must be what the previous page's next gave", field: "after")
            }
            return cursor
        }
        let page = try await reports.behind(studyId: studyId, activityId: activityId, atLeast: atLeast, limit: limit + 1, after: cursor)
        let shown = page.prefix(limit)
        let next = page.count > limit ? shown.last.map { Self.text($0.0) } : nil
        return ParticipantsBehind(entries: shown.map(\.1), next: next)
    }

    @Sendable package func participantWeeks(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantRunWeeks {
        let studyId = try context.parameters.decoded("studyId")
        let participantId = try AdminParticipantRoutes.participantId(context)
        let weeks = try Self.number(request.uri.queryParameters["weeks"], name: "weeks", in: 1...Self.mostWeeks) ?? Self.defaultWeeks
        guard let report = try await reports.participantWeeks(studyId: studyId, participantId: participantId, weeks: weeks) else {
            throw RegistrationAdminError.noParticipant(studyId: studyId, participantId: participantId)
        }
        return report
    }

    /// A whole number in `range`, refused by name otherwise; nil when absent.
    static func number(_ text: Substring?, name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text else { return nil }
        guard text.utf8.count <= 6, let value = Int(text), range.contains(value) else {
            throw APIError.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return value
    }

    /// A `YYYY-MM-DD` date (years 1970 to 9999), as the Monday of its week; nil when absent.
    static func monday(_ text: Substring?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard text.utf8.count == 10, let (year, month, day) = LocalTimes.date(String(text)), (1970...9999).contains(year) else {
            throw APIError.badRequest("\(name) must be a date, YYYY-MM-DD", field: name)
        }
        return RunTally.monday(of: GregorianDays.days(year: year, month: month, day: day))
    }

    /// `missedInARow.participantId.activityId`: the activity id last, as it may hold anything.
    static func text(_ cursor: RunReportStore.BehindCursor) -> String {
        "\(cursor.missedInARow).\(cursor.participantId.uuidString.lowercased()).\(cursor.activityId)"
    }

    static func cursor(_ text: Substring) -> RunReportStore.BehindCursor? {
        guard text.utf8.count <= 160 else { return nil }
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count <= 6, let missed = Int(parts[0]), missed >= 1,
              let participant = UUID(uuidString: String(parts[1]))
        else { return nil }
        return RunReportStore.BehindCursor(missedInARow: missed, participantId: participant, activityId: String(parts[2]))
    }
}

extension StudyRunWeeks: ResponseEncodable {}
extension ParticipantsBehind: ResponseEncodable {}
extension ParticipantRunWeeks: ResponseEncodable {}
