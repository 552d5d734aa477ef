import Foundation
import StudyModels

/// Turns a study activity and its schedule into the `activityList` entry the apps schedule from,
/// with times in the study's time zone (docs/app-api.md, `activityList`).
package struct ActivityListing {
    package let zone: TimeZone
    package let launchedAt: Date?
    package let language: String?

    package init?(zoneName: String, launchedAt: Date?, language: String?) {
        guard let zone = TimeZone(identifier: zoneName) else { return nil }
        self.zone = zone
        self.launchedAt = launchedAt
        self.language = language
    }

    package func item(for activity: StudyActivity, version: Int, lastModified: Date, deletedAt: Date? = nil) -> ActivityListItem {
        let schedule = activity.schedule
        let (start, end) = schedule.anchor == nil ? window(schedule) : ("", "")
        return ActivityListItem(
            activityId: activity.activityId,
            activityVersion: VersionCounters.label(of: activity, version: version),
            title: activity.title.text(for: language),
            type: activity.kind.rawValue,
            taskSubType: activity.steps.first { $0.type == .task }?.resultType ?? "",
            branching: activity.branching,
            lastModified: WireDates.format(lastModified, in: zone),
            state: deletedAt == nil ? "active" : "deleted",
            startTime: start,
            endTime: deletedAt.map { WireDates.format($0, in: zone) } ?? end,
            schedulingType: schedule.anchor == nil ? "Regular" : "AnchorDate",
            anchorDate: schedule.anchor.map { anchorDate($0, schedule) },
            frequency: ActivityListItem.Frequency(
                type: schedule.frequency.wireName,
                addNewRuns: schedule.addNewRuns ?? false,
                runs: runs(schedule),
                anchorRuns: (schedule.anchorRuns ?? []).map {
                    .init(startDays: $0.startDays, endDays: $0.endDays, time: Self.clock($0.time ?? "00:00"))
                }))
    }

    /// `startTime` and `endTime` of an absolute schedule: its bounds as the schedule engine reads
    /// them (one reading for the apps and the server's runs), empty where there is none.
    private func window(_ schedule: Schedule) -> (String, String) {
        let bounds = ActivityBounds.absolute(schedule, zone: zone, launchedAt: launchedAt)
        let text = { (date: Date?) in date.map { WireDates.format($0, in: zone) } ?? "" }
        return (text(bounds.start), text(bounds.end))
    }

    /// Daily windows as times of day; manual runs as absolute times.
    private func runs(_ schedule: Schedule) -> [ActivityListItem.Run] {
        switch schedule.frequency {
        case .daily:
            // The windows the server's runs are computed from: the apps compute theirs from these.
            return ScheduleEngine.dailyWindows(schedule).map { .init(startTime: Self.clock(seconds: $0.start), endTime: Self.clock(seconds: $0.end)) }
        case .manual where schedule.anchor == nil:
            return (schedule.runs ?? []).map { .init(startTime: localDateTime($0.start), endTime: localDateTime($0.end)) }
        default:
            return []
        }
    }

    private func anchorDate(_ anchor: Anchor, _ schedule: Schedule) -> ActivityListItem.AnchorDate {
        let relative = schedule.frequency != .manual && schedule.frequency != .ongoing
        return .init(
            sourceType: anchor.source.wireName, sourceActivityId: anchor.activityId, sourceKey: anchor.key, sourceFormKey: anchor.formKey,
            propertyMetadata: anchor.propertyKey.map { .init(propertyId: $0, shouldRefresh: false, dataSource: "") },
            start: relative
                ? .init(
                    anchorDays: schedule.startDays ?? 0, dayOfWeek: schedule.dayOfWeek, dateOfMonth: schedule.dateOfMonth,
                    time: Self.clock(schedule.time ?? schedule.dailyTimes?.first ?? "00:00")) : nil,
            end: relative
                ? .init(anchorDays: schedule.endDays, repeatInterval: schedule.repeatCount, time: Self.clock("23:59:59")) : nil)
    }

    private func localDateTime(_ text: String) -> String {
        let halves = text.split(separator: "T").map(String.init)
        guard halves.count == 2 else { return "" }
        return WireDates.instant(date: halves[0], time: halves[1], in: zone).map { WireDates.format($0, in: zone) } ?? ""
    }

    /// `HH:mm:ss`.
    package static func clock(_ text: String) -> String { clock(seconds: LocalTimes.time(text) ?? 0) }

    package static func clock(seconds: Int) -> String {
        String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
    }
}
