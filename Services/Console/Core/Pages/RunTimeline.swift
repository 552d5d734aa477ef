import Foundation
import StudyModels

/// A participant's runs as their page shows them (registration's runs endpoint): per activity,
/// the server's counts beside what the app reports, and a timeline of the runs near now.
package struct RunTimeline: Sendable, Equatable {
    package struct Summary: Sendable, Equatable {
        package var activityId: String
        package var completed = 0
        package var missed = 0
        package var due = 0
        package var upcoming = 0
        package var expired = 0
        /// What the app last reported (`runs completed of total`, missed), if it reported the activity.
        package var app: String
        /// The app's completed or missed count is not the server's.
        package var disagrees: Bool
    }

    package struct Chip: Sendable, Equatable {
        package var runId: Int
        package var state: String
        /// `Sun 5 Apr` and `08:00`, on the participant's clock.
        package var day: String
        package var time: String
        /// Everything about the run, for its tooltip and screen readers.
        package var label: String
    }

    package struct Row: Sendable, Equatable {
        package var activityId: String
        package var chips: [Chip]
    }

    package var zone: String
    package var summaries: [Summary]
    package var rows: [Row]

    /// The page reads the participant's runs since they enrolled (a year at most) to a week ahead,
    /// and draws the timeline for the last `pastDays` days and the week ahead.
    package static let pastDays = 14
    package static let aheadDays = 7

    /// The window the page asks registration for.
    package static func window(enrolledAt: Date?, now: Date) -> (from: Date, to: Date) {
        let to = now.addingTimeInterval(Double(aheadDays) * 86_400)
        let earliest = to.addingTimeInterval(-365 * 86_400)
        return (max(enrolledAt ?? earliest, earliest), to)
    }

    package init(reply: ParticipantRunsReply, app: [ParticipantDetail.Activity], now: Date) {
        zone = reply.timeZone + Self.zoneNote(reply.timeZoneSource)
        let reported = Dictionary(app.map { ($0.activityId, $0) }, uniquingKeysWith: { first, _ in first })
        let byActivity = Dictionary(grouping: reply.runs, by: \.activityId)
        let timelineFrom = now.addingTimeInterval(-Double(Self.pastDays) * 86_400)
        let parser = ISO8601DateFormatter()
        // Every activity with runs, and every one the app reported (one the schedule no longer
        // gives runs to still shows what the app says of it).
        summaries = Set(byActivity.keys).union(reported.keys).sorted().map { activityId in
            var summary = Summary(activityId: activityId, app: "", disagrees: false)
            for run in byActivity[activityId] ?? [] {
                switch RunState(rawValue: run.state) {
                case .completed: summary.completed += 1
                case .missed: summary.missed += 1
                case .due: summary.due += 1
                case .upcoming: summary.upcoming += 1
                case .expired: summary.expired += 1
                case nil: break
                }
            }
            if let state = reported[activityId] {
                summary.app = "\(state.runsCompleted) of \(state.runsTotal) done, \(state.runsMissed) missed"
                summary.disagrees = state.runsCompleted != summary.completed || state.runsMissed != summary.missed
            } else {
                summary.app = "nothing reported"
            }
            return summary
        }
        rows = byActivity.keys.sorted().compactMap { activityId in
            let chips = (byActivity[activityId] ?? []).filter { run in
                guard let start = parser.date(from: run.start) else { return false }
                let end = run.end.flatMap { parser.date(from: $0) } ?? .distantFuture
                return end >= timelineFrom && start <= now.addingTimeInterval(Double(Self.aheadDays) * 86_400)
            }.map(Self.chip)
            return chips.isEmpty ? nil : Row(activityId: activityId, chips: chips)
        }
    }

    static func zoneNote(_ source: String) -> String {
        switch source {
        case "reported": " (as their app reports it)"
        case "inferred": " (read from the offsets their responses carry)"
        default: " (the study's: nothing is known of theirs yet)"
        }
    }

    /// A run's chip: its day and time as the participant's clock showed them.
    static func chip(_ run: ParticipantRunsReply.Run) -> Chip {
        let start = wall(run.start)
        let end = run.end.map(wall)
        let span = end.map { "\(start.day) \(start.time) to \($0.day == start.day ? "" : "\($0.day) ")\($0.time)" } ?? "\(start.day) \(start.time), open"
        return Chip(
            runId: run.runId, state: run.state, day: start.day, time: start.time,
            label: "Run \(run.runId), \(span) (\(start.offset)): \(stateName(run.state))"
                + (run.completedBy.isEmpty ? "" : ", said by \(run.completedBy.map(sourceName).joined(separator: " and "))"))
    }

    /// `2026-04-05T08:00:00+10:00` as `Sun 5 Apr`, `08:00` and `+10:00`, read from the text: it is
    /// already on the participant's clock.
    static func wall(_ text: String) -> (day: String, time: String, offset: String) {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 25, let (year, month, day) = LocalTimes.date(String(String.UnicodeScalarView(scalars[0..<10]))) else {
            return (text, "", "")
        }
        let weekday = WallClock(day: GregorianDays.days(year: year, month: month, day: day), seconds: 0).weekday
        let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return ("\(names[weekday - 1]) \(day) \(months[month - 1])", String(String.UnicodeScalarView(scalars[11..<16])),
                String(String.UnicodeScalarView(scalars[19...])))
    }

    static func stateName(_ state: String) -> String {
        switch state {
        case "completed": "completed"
        case "missed": "missed"
        case "due": "due now"
        case "upcoming": "upcoming"
        case "expired": "expired when they left"
        default: state
        }
    }

    static func sourceName(_ source: String) -> String {
        source == "app" ? "their app" : "a response"
    }
}
