import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's charts (`/studies/{studyId}/charts`, viewer), drawn on the server as SVG: enrollment
/// over time per site (registration), responses per day per activity (the response service) and
/// adherence per activity (registration), each with its numbers in a table beside it.
package struct ChartRoutes: Sendable {
    let pages: ConsolePages

    /// The days the responses chart covers, today included.
    static let responseDays = 30

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/charts", use: show)
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            async let timeline = pages.api.enrollmentTimeline(of: studyId, token: session.token, logger: context.logger)
            async let daily = pages.api.dailyResponses(of: studyId, days: Self.responseDays, token: session.token, logger: context.logger)
            async let adherence = pages.api.adherence(of: studyId, token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let view = ChartsView(
                enrollment: Self.enrollment(try await timeline), responses: Self.responses(try await daily),
                adherence: Self.adherence(try await adherence))
            return pages.render(view, title: "Charts · \(state.summary.name)", session: session, state: state, current: "charts")
        }
    }

    /// Enrolled in all, per site, on every day from the first enrollment to today.
    static func enrollment(_ timeline: EnrollmentTimeline) -> ChartsView.Enrollment {
        // From the day before the first enrollment (none yet), so even one day draws a line.
        let first = timeline.sites.compactMap { $0.days.first?.date }.min().flatMap(UTCDay.date)
        let labels = first.map { UTCDay.days(from: UTCDay.string(UTCDay.start(of: $0, offset: -1)), to: UTCDay.string(.now)) } ?? []
        let position = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        let series = timeline.sites.map { site in
            var values = [Int](repeating: 0, count: labels.count)
            for day in site.days { if let index = position[day.date] { values[index] += day.enrolled } }
            return SVGChart.Series(name: site.name, values: values)
        }
        let totals = series.map { $0.values.reduce(0, +) }
        return .init(
            hasData: !labels.isEmpty,
            chart: SVGChart.cumulativeLines(
                id: "enrollment-chart", title: "Enrollment over time, per site",
                description: "Participants enrolled in all, by day (UTC), a line per site.", labels: labels, series: series),
            sites: zip(timeline.sites, totals).map { site, total in
                .init(
                    name: site.name, enrolled: total, withdrawn: site.days.reduce(0) { $0 + $1.withdrawn },
                    first: site.days.first?.date ?? "", last: site.days.last?.date ?? "")
            },
            total: totals.reduce(0, +))
    }

    /// Responses received per day of the last `responseDays`, a column per day, activities stacked.
    static func responses(_ daily: DailyResponses) -> ChartsView.Responses {
        let labels = UTCDay.days(from: daily.from, to: daily.to)
        let position = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        let series = daily.activities.map { activity in
            var values = [Int](repeating: 0, count: labels.count)
            for day in activity.days { if let index = position[day.date] { values[index] = day.count } }
            return SVGChart.Series(name: activity.activityId, values: values)
        }
        let days = labels.compactMap { label -> ChartsView.Responses.Day? in
            let counts = series.map { $0.values[position[label] ?? 0] }
            guard counts.contains(where: { $0 > 0 }) else { return nil }
            return .init(date: label, counts: counts.map { .init(count: $0) }, total: counts.reduce(0, +))
        }
        return .init(
            hasData: !daily.activities.isEmpty,
            chart: SVGChart.stackedColumns(
                id: "responses-chart", title: "Responses per day, per activity",
                description: "Responses received each day (UTC) from \(daily.from) to \(daily.to), the activities stacked.",
                labels: labels, series: series),
            activities: series.map { .init(name: $0.name) }, days: days.reversed(), from: daily.from, to: daily.to)
    }

    /// Per activity, how many participants are up to date, behind or not started.
    static func adherence(_ adherence: ActivityAdherence) -> ChartsView.Adherence {
        let labels = adherence.activities.map(\.activityId)
        let series = [
            SVGChart.Series(name: "Up to date", values: adherence.activities.map(\.upToDate)),
            SVGChart.Series(name: "Behind", values: adherence.activities.map(\.behind)),
            SVGChart.Series(name: "Not started", values: adherence.activities.map(\.notStarted)),
        ]
        return .init(
            hasData: !labels.isEmpty,
            chart: SVGChart.stackedRows(
                id: "adherence-chart", title: "Adherence per activity",
                description: "Of the \(adherence.participants) participants in the study, per activity: up to date, behind, not started.",
                labels: labels, series: series),
            activities: adherence.activities.map {
                .init(activityId: $0.activityId, upToDate: $0.upToDate, behind: $0.behind, notStarted: $0.notStarted)
            },
            participants: adherence.participants)
    }
}

/// `charts.mustache`: enrollment, responses and adherence, each a chart and its table.
struct ChartsView: PageView {
    static let template = "charts"

    struct Enrollment {
        struct Site {
            var name: String
            var enrolled: Int
            var withdrawn: Int
            var first: String
            var last: String
        }

        var hasData: Bool
        var chart: SafeHTML
        var sites: [Site]
        var total: Int
    }

    struct Responses {
        struct Activity {
            var name: String
        }

        struct Day {
            struct Count {
                var count: Int
            }

            var date: String
            var counts: [Count]
            var total: Int
        }

        var hasData: Bool
        var chart: SafeHTML
        var activities: [Activity]
        /// The days with a response, newest first.
        var days: [Day]
        var from: String
        var to: String
    }

    struct Adherence {
        var hasData: Bool
        var chart: SafeHTML
        var activities: [ParticipantsView.Adherence]
        var participants: Int
    }

    var enrollment: Enrollment
    var responses: Responses
    var adherence: Adherence
}
