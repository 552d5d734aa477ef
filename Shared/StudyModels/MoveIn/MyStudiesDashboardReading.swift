import Foundation
import JSONText

/// `studyDashboard` read back into the study's dashboard: each statistic and chart whose activity
/// comes over. A question inside a form is addressed `form.question` in the reply, as the
/// originals did; it is split where the activity has a form of that key.
enum MyStudiesDashboardReading {
    static func dashboard(
        _ reply: JSONValue?, activities: [StudyActivity], studyId: String, findings: inout [MoveInFinding]
    ) -> Dashboard {
        let content = reply?["dashboard"]
        var dashboard = Dashboard()
        func source(_ value: JSONValue?, at: String) -> DashboardSource? {
            guard let activityId = Lenient.text(value?["activity"]?["activityId"]), let key = Lenient.text(value?["key"]) else {
                findings.append(MoveInFinding(studyId: studyId, at: at, effect: .notImported, message: "names no activity and key"))
                return nil
            }
            guard let activity = activities.first(where: { $0.activityId.unicodeScalars.elementsEqual(activityId.unicodeScalars) }) else {
                findings.append(MoveInFinding(
                    studyId: studyId, at: at, effect: .notImported, message: "reads \(activityId), which does not come over"))
                return nil
            }
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, activity.steps.contains(where: { $0.type == .form && $0.key == parts[0] }) {
                return DashboardSource(activityId: activity.activityId, key: parts[1], formKey: parts[0])
            }
            return DashboardSource(activityId: activity.activityId, key: key)
        }
        for (index, statistic) in Lenient.items(content?["statistics"]).enumerated() {
            let at = "studyDashboard#/dashboard/statistics/\(index)"
            let calculationName = Lenient.text(statistic["calculation"]) ?? ""
            guard let calculation = Statistic.Calculation(rawValue: calculationName) else {
                findings.append(MoveInFinding(
                    studyId: studyId, at: at + "/calculation", effect: .notImported,
                    message: "\"\(calculationName)\" is not a calculation the apps make"))
                continue
            }
            guard let dataSource = source(statistic["dataSource"], at: at + "/dataSource") else { continue }
            dashboard.statistics.append(Statistic(
                title: Lenient.text(statistic["title"]) ?? "", displayName: .plain(Lenient.text(statistic["displayName"]) ?? ""),
                statType: Lenient.text(statistic["statType"]) ?? "", unit: .plain(Lenient.text(statistic["unit"]) ?? ""),
                calculation: calculation, dataSource: dataSource))
        }
        for (index, chart) in Lenient.items(content?["charts"]).enumerated() {
            let at = "studyDashboard#/dashboard/charts/\(index)"
            let rangeName = Lenient.text(chart["dataSource"]?["timeRangeType"]) ?? ""
            guard let range = Chart.TimeRange(rawValue: rangeName) else {
                findings.append(MoveInFinding(
                    studyId: studyId, at: at + "/dataSource/timeRangeType", effect: .notImported,
                    message: "\"\(rangeName)\" is not a time range the apps chart"))
                continue
            }
            guard let dataSource = source(chart["dataSource"], at: at + "/dataSource") else { continue }
            dashboard.charts.append(Chart(
                title: Lenient.text(chart["title"]) ?? "", displayName: .plain(Lenient.text(chart["displayName"]) ?? ""),
                timeRangeType: range, scrollable: Lenient.flag(chart["scrollable"]), dataSource: dataSource,
                configuration: chart["configuration"]))
        }
        return dashboard
    }
}
