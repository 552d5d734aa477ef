import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's adherence as the server counts it (`/studies/{studyId}/adherence`, viewer): per
/// activity, week by week, the runs completed of those closed, and the reminders pushed; and who
/// is behind right now, filtered by activity and how many runs they missed in a row, with the
/// app's own counts beside the server's and their last contact (docs/console.md, Adherence).
package struct AdherenceRoutes: Sendable {
    let pages: ConsolePages

    /// The weeks the page covers, this one included.
    static let weeks = 12
    /// Participants listed per page.
    static let pageSize = 50

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/adherence", use: show)
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        // The twelve weeks up to a day the coordinator picks (`?until=`), else up to today.
        let now = Date()
        let until = try parameters["until"].map { text in
            guard let day = RunTimeline.Shown.start(String(text), now: now) else {
                throw APIError.badRequest("until must be a date (yyyy-MM-dd) from 2000 to a year from now", field: "until")
            }
            return day
        }
        // What the filter sends, passed on as the admin API takes it (it refuses what is wrong).
        let activity = parameters["activity"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let atLeast = parameters["atLeast"].map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? "1"
        var query: [(String, String)] = [("limit", String(Self.pageSize)), ("atLeast", atLeast)]
        if let activity { query.append(("activityId", activity)) }
        if let after = parameters["after"] { query.append(("after", String(after))) }
        return try await pages.signedIn(request, context) { session, _ in
            let end = until.map { Date(timeIntervalSince1970: Double($0) * 86_400 + 43_200) } ?? now
            async let weeks = pages.api.studyRunWeeks(of: studyId, weeks: Self.weeks, now: end, token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let counted = try await weeks
            var view = AdherenceView(
                weeks: Self.weeks(counted), behind: [], nextHref: nil, activities: [], atLeast: atLeast, behindMessage: nil)
            let page = "/studies/\(AdminAPIClient.segment(studyId))/adherence"
            let last = until ?? Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
            view.earlierHref = page + "?until=\(GregorianDays.dateText(last - Self.weeks * 7))#weeks"
            view.laterHref = page + "?until=\(GregorianDays.dateText(last + Self.weeks * 7))#weeks"
            view.nowHref = page + "#weeks"
            view.showsNow = until == nil
            // The activities with runs in the weeks shown, and the one chosen.
            let activities = Set(counted.activities.map(\.activityId) + [activity].compactMap { $0 }).sorted()
            view.activities = activities.map { OptionChoice(value: $0, label: $0, selected: $0 == activity) }
            do {
                let behind = try await pages.api.participantsBehind(of: studyId, query: query, token: session.token, logger: context.logger)
                // Each named by their number in the study, as on every page; the table stands
                // without them when the response service cannot say.
                let numbers = try? await AdminAPIError.outcome { () async throws(AdminAPIError) in
                    try await pages.api.participantNumbers(
                        of: studyId, hashes: behind.entries.compactMap(\.appTokenSHA256), token: session.token, logger: context.logger)
                }.get()
                view.behind = behind.entries.map { Self.row($0, studyId: studyId, numbers: numbers) }
                view.hasBehind = !view.behind.isEmpty
                view.nextHref = behind.next.map { next in
                    "/studies/\(AdminAPIClient.segment(studyId))/adherence"
                        + AdminAPIClient.queryString([("activity", activity ?? ""), ("atLeast", atLeast), ("after", next)])
                }
            } catch let error as AdminAPIError where error.status == 400 {
                // A filter the admin API refuses: said beside the form, the rest of the page stands.
                view.behindMessage = error.message
            }
            return pages.render(view, title: "Adherence · \(state.summary.name)", session: session, state: state, current: "adherence")
        }
    }

    /// The weeks newest first, a cell per activity, and a chart of all activities' runs per week.
    static func weeks(_ reply: StudyRunWeeks) -> AdherenceView.Weeks {
        let activities = reply.activities.map(\.activityId)
        var mondays: Set<String> = []
        var byWeek: [String: [String: RunWeek]] = [:]
        for activity in reply.activities {
            for week in activity.weeks {
                mondays.insert(week.week)
                byWeek[week.week, default: [:]][activity.activityId] = week
            }
        }
        let ordered = mondays.sorted()
        let rows = ordered.reversed().map { monday in
            let cells = activities.map { id -> AdherenceView.Weeks.Cell in
                guard let week = byWeek[monday]?[id] else { return .init(text: "–", reminded: nil) }
                let rate = week.adherencePercent.map { " · \($0)%" } ?? ""
                let notStored = week.notStored > 0 ? " · \(week.notStored) not stored" : ""
                return .init(
                    text: "\(week.completed) of \(week.completed + week.missed)\(rate)\(notStored)",
                    reminded: (week.reminded ?? 0) > 0 ? "\(week.reminded ?? 0) reminded" : nil)
            }
            return AdherenceView.Weeks.Row(week: monday, cells: cells)
        }
        let total = { (monday: String, value: (RunWeek) -> Int) in (byWeek[monday] ?? [:]).values.reduce(0) { $0 + value($1) } }
        let chart = SVGChart.stackedColumns(
            id: "adherence-weeks-chart", title: "Runs per week, all activities",
            description: "Runs that opened each week (Monday, in each participant's zone): completed, missed, expired, done with answers not stored; runs still open are not drawn.",
            labels: ordered,
            series: [
                .init(name: "Completed", values: ordered.map { total($0, \.completed) }),
                .init(name: "Missed", values: ordered.map { total($0, \.missed) }),
                .init(name: "Expired", values: ordered.map { total($0, \.expired) }),
                .init(name: "Answers not stored", values: ordered.map { total($0, \.notStored) }),
            ])
        return .init(
            hasData: !ordered.isEmpty, chart: chart, activities: activities.map { .init(name: $0) }, rows: rows,
            from: reply.from, to: reply.to)
    }

    /// `numbers`: participant numbers by the hash of the id each app holds, nil when the response
    /// service could not say.
    static func row(_ entry: ParticipantsBehind.Entry, studyId: String, numbers: [String: Int64]?) -> AdherenceView.Behind {
        let app = entry.appCompleted.map { "\($0) done · \(entry.appMissed ?? 0) missed" } ?? "not reported"
        let disagrees = entry.appCompleted.map { $0 != entry.completed || (entry.appMissed ?? 0) != entry.missed } ?? false
        return AdherenceView.Behind(
            participantId: entry.participantId,
            label: ParticipantAddress.label(hash: entry.appTokenSHA256, in: numbers),
            href: ParticipantAddress.path(
                studyId: studyId, number: entry.appTokenSHA256.flatMap { numbers?[$0] }, participantId: entry.participantId),
            site: entry.site ?? "", activityId: entry.activityId, missedInARow: entry.missedInARow,
            server: "\(entry.completed) done · \(entry.missed) missed", app: app, disagrees: disagrees,
            due: entry.dueRunId.map { run in "run \(run)" + (entry.dueUntil.map { " until \(Self.local($0))" } ?? "") } ?? "",
            lastContact: entry.lastContact.map(Self.local) ?? "never", timeZone: entry.timeZone ?? "")
    }

    /// `2026-03-20T08:00:00+11:00` as `2026-03-20 08:00 (+11:00)`: the participant's own clock.
    static func local(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 20 else { return text }
        let date = String(String.UnicodeScalarView(scalars[0..<10]))
        let time = String(String.UnicodeScalarView(scalars[11..<16]))
        let offset = String(String.UnicodeScalarView(scalars[19...]))
        return "\(date) \(time) (\(offset == "Z" ? "UTC" : offset))"
    }
}

/// `adherence.mustache`.
struct AdherenceView: PageView {
    static let template = "adherence"

    struct Weeks {
        struct Activity {
            var name: String
        }

        struct Cell {
            var text: String
            /// nil when none was pushed (a template section shows an empty text too).
            var reminded: String?
        }

        struct Row {
            var week: String
            var cells: [Cell]
        }

        var hasData: Bool
        var chart: SafeHTML
        var activities: [Activity]
        /// Newest first.
        var rows: [Row]
        var from: String
        var to: String
    }

    struct Behind {
        var participantId: String
        var label: String
        var href: String
        var site: String
        var activityId: String
        var missedInARow: Int
        var server: String
        var app: String
        var disagrees: Bool
        var due: String
        var lastContact: String
        var timeZone: String
    }

    var weeks: Weeks
    var behind: [Behind]
    var nextHref: String?
    var activities: [OptionChoice]
    var atLeast: String
    /// Why the filter was refused, when it was.
    var behindMessage: String?
    var hasBehind = false
    /// The twelve weeks before and after those shown, and back to now when another time is shown.
    var earlierHref = ""
    var laterHref = ""
    var nowHref = ""
    var showsNow = true
}
