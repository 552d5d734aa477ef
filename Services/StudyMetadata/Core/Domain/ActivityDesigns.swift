import Foundation
import StudyModels

extension ActivityDesign {
    /// An activity version's design as the apps (and the response service) read it: its steps,
    /// and its schedule's first and last moments written in the study's time zone.
    package init(_ activity: StudyActivity, in document: StudyDocument, activityVersion: Int) {
        let schedule = activity.schedule
        self.init(
            type: activity.kind,
            metadata: ActivityMetadata(
                studyId: document.studyId, activityId: activity.activityId, name: activity.title,
                version: VersionCounters.label(of: activity, version: activityVersion),
                startDate: schedule.startDate.flatMap {
                    WireDates.format(date: $0, time: schedule.time ?? schedule.dailyTimes?.first, in: document.timeZone)
                } ?? "",
                endDate: schedule.endDate.flatMap { WireDates.format(date: $0, time: "23:59:59", in: document.timeZone) } ?? ""),
            steps: activity.steps)
    }
}
