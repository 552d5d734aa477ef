import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participants/{participantId}/runs?from=&to=`: one
/// participant's runs and their states (docs/schedules.md), for anyone who may view the study.
package struct AdminRunRoutes: Sendable {
    package let runs: ParticipantRuns
    package let now: @Sendable () -> Date

    package init(runs: ParticipantRuns, now: @escaping @Sendable () -> Date = Date.init) {
        self.runs = runs
        self.now = now
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.participantRuns, use: list)
    }

    /// Without `from`, the window starts a week before now; without `to`, it ends a week after.
    static let defaultReach: TimeInterval = 7 * 86_400

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantRunsReply {
        let studyId = try context.parameters.decoded("studyId")
        let participantId = try AdminParticipantRoutes.participantId(context)
        let now = now()
        let (from, to) = try Self.window(request.uri.queryParameters, now: now)
        return try await runs.runs(studyId: studyId, participantId: participantId, from: from, to: to, now: now, logger: context.logger)
    }

    /// The window `from` and `to` ask for, checked: a week either side of now by default.
    static func window(_ parameters: Parameters, now: Date) throws -> (from: Date, to: Date) {
        let from = try Self.instant(parameters["from"], name: "from") ?? now.addingTimeInterval(-Self.defaultReach)
        let to = try Self.instant(parameters["to"], name: "to") ?? now.addingTimeInterval(Self.defaultReach)
        guard from < to else { throw APIError.badRequest("from must be before to", field: "from") }
        guard to.timeIntervalSince(from) <= ParticipantRuns.longestSpan else {
            throw APIError.badRequest("from and to may be at most 366 days apart", field: "to")
        }
        // Every run is counted from the participant's first, so a window far in the future would
        // cost an expansion of every year before it.
        guard to <= now.addingTimeInterval(ParticipantRuns.furthestAhead) else {
            throw APIError.badRequest("to may be at most two years from now", field: "to")
        }
        return (from, to)
    }

    /// An RFC 3339 instant with its offset (`2026-03-20T08:00:00+11:00`, `...Z`, fractions allowed),
    /// within the years a schedule can name; nil when absent.
    static func instant(_ text: Substring?, name: String) throws -> Date? {
        guard let text else { return nil }
        let refusal = APIError.badRequest("\(name) must be an RFC 3339 date-time with an offset, like 2026-03-20T08:00:00+11:00", field: name)
        guard text.utf8.count <= 40 else { throw refusal }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var date = formatter.date(from: String(text))
        if date == nil {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            date = formatter.date(from: String(text))
        }
        guard let date, (1970...9999).contains(Calendar(identifier: .gregorian).component(.year, from: date)) else { throw refusal }
        return date
    }
}

extension ParticipantRunsReply: ResponseEncodable {}
