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
        /// Done, with answers that could not be stored (the processing page has them).
        package var notStored = 0
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
    /// What the timeline shows, and the links to the three weeks before and after it.
    package var title: String
    package var earlierHref: String
    package var laterHref: String
    /// The link back to the weeks around now, when another time is shown.
    package var nowHref: String
    package var showsNow: Bool
    /// Said when registration cut the runs short (more than one reply holds): where the counts stop.
    package var cutNote: String?

    /// The page reads the participant's runs since they enrolled (a year at most) to a week ahead,
    /// and draws the timeline for the last `pastDays` days and the week ahead, or for the
    /// `shownDays` from a day the coordinator picks (`?timeline=yyyy-MM-dd`).
    package static let pastDays = 14
    package static let aheadDays = 7
    package static let shownDays = 21

    /// The days the timeline draws: around now, or `shownDays` from `start` (a `GregorianDays`
    /// number, midnight UTC).
    package struct Shown: Sendable, Equatable {
        package var from: Date
        package var to: Date
        package var start: Int?

        package init(start: Int?, now: Date) {
            self.start = start
            if let start {
                from = Date(timeIntervalSince1970: Double(start) * 86_400)
                to = from.addingTimeInterval(Double(RunTimeline.shownDays) * 86_400)
            } else {
                from = now.addingTimeInterval(-Double(RunTimeline.pastDays) * 86_400)
                to = now.addingTimeInterval(Double(RunTimeline.aheadDays) * 86_400)
            }
        }

        /// `?timeline=`: a date from 2000 to a year ahead (registration lists no runs further
        /// ahead than that for a page); nil for anything else.
        package static func start(_ text: String, now: Date) -> Int? {
            guard let (year, month, day) = LocalTimes.date(text), year >= 2000 else { return nil }
            let days = GregorianDays.days(year: year, month: month, day: day)
            return Double(days) * 86_400 <= now.timeIntervalSince1970 + 366 * 86_400 ? days : nil
        }
    }

    /// The window the page asks registration for: from their enrolment (a year at most before
    /// its end) to a week ahead or the end of the days shown, whichever is later.
    package static func window(enrolledAt: Date?, now: Date, shown: Shown) -> (from: Date, to: Date) {
        let to = max(now.addingTimeInterval(Double(aheadDays) * 86_400), shown.to)
        let earliest = to.addingTimeInterval(-365 * 86_400)
        return (max(enrolledAt ?? earliest, earliest), to)
    }

    package init(reply: ParticipantRunsReply, app: [ParticipantDetail.Activity], now: Date, shown: Shown, pageHref: String) {
        zone = reply.timeZone + Self.zoneNote(reply.timeZoneSource)
        let reported = Dictionary(app.map { ($0.activityId, $0) }, uniquingKeysWith: { first, _ in first })
        let byActivity = Dictionary(grouping: reply.runs, by: \.activityId)
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
                case .notStored: summary.notStored += 1
                case nil: break
                }
            }
            if let state = reported[activityId] {
                summary.app = "\(state.runsCompleted) of \(state.runsTotal) done, \(state.runsMissed) missed"
                // The app counts a run whose answers were not stored as done; so does the server, apart.
                summary.disagrees = state.runsCompleted != summary.completed + summary.notStored || state.runsMissed != summary.missed
            } else {
                summary.app = "nothing reported"
            }
            return summary
        }
        rows = byActivity.keys.sorted().compactMap { activityId in
            let chips = (byActivity[activityId] ?? []).filter { run in
                guard let start = WallClock.instant(rfc3339: run.start) else { return false }
                let end = run.end.flatMap(WallClock.instant(rfc3339:)) ?? .distantFuture
                return end >= shown.from && start < shown.to
            }.map(Self.chip)
            return chips.isEmpty ? nil : Row(activityId: activityId, chips: chips)
        }
        let first = shown.start ?? Int((shown.from.timeIntervalSince1970 / 86_400).rounded(.down))
        let link = { (day: Int) in "\(pageHref)?timeline=\(GregorianDays.dateText(day))#runs-title" }
        title = shown.start.map { "Three weeks from \(Self.wall(GregorianDays.dateText($0) + "T00:00:00+00:00").day) \(GregorianDays.civil(days: $0).year)" }
            ?? "The last two weeks and the week ahead"
        earlierHref = link(first - Self.shownDays)
        laterHref = link(first + Self.shownDays)
        nowHref = pageHref + "#runs-title"
        showsNow = shown.start == nil
        cutNote = reply.cutAt.map { cut in
            let wall = Self.wall(cut)
            return "This participant has more runs than one page can count: the counts and the timeline stop at \(wall.day) \(wall.time). "
                + "The timeline from an earlier day shows the runs before it."
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
        case "notStored": "done, answers not stored"
        default: state
        }
    }

    static func sourceName(_ source: String) -> String {
        switch source {
        case "app": "their app"
        case "unstoredResponse": "a response that could not be stored"
        default: "a response"
        }
    }
}
