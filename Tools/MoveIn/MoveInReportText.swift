import StudyModels

/// A move-in report as `studystack-import` prints it: per study, where it stands, the versions and
/// designs that come over, the counts, then every finding grouped by what it means.
public enum MoveInReportText {
    public static func render(_ report: StudyMoveInReport) -> String {
        var lines: [String] = []
        lines.append("\(report.dryRun ? "Dry run" : "Import") of \(report.studies.count) studies from \(report.source) (read \(report.readAt))")
        for study in report.studies {
            lines.append("")
            lines.append("\(study.studyId) (\(study.sourceStatus) at the source): \(study.standing(dryRun: report.dryRun))")
            lines.append("  versions: \(study.versions.joined(separator: ", ")) (\(study.versionsHere) of \(study.versions.count) here)")
            for activity in study.activities {
                lines.append("  activity \(activity.activityId): \(activity.versions.joined(separator: ", "))")
            }
            lines.append("  " + study.countsSentence)
            for effect in MoveInFinding.Effect.reportOrder {
                let found = study.findings.filter { $0.effect == effect }
                guard !found.isEmpty else { continue }
                lines.append("  \(effect.heading):")
                for finding in found { lines.append("    \(finding.at): \(finding.message)") }
            }
        }
        return lines.joined(separator: "\n")
    }

    public static func render(_ report: ParticipantMoveInReport) -> String {
        var lines = ["\(report.dryRun ? "Dry run" : "Import") of participants from \(report.source) (read \(report.readAt))"]
        lines += report.counts.sentences(dryRun: report.dryRun).map { "  " + $0 }
        for effect in MoveInFinding.Effect.reportOrder {
            let found = report.findings.filter { $0.effect == effect }
            guard !found.isEmpty else { continue }
            lines.append("  \(effect.heading):")
            for finding in found { lines.append("    \(finding.studyId.isEmpty ? "" : finding.studyId + " ")\(finding.at): \(finding.message)") }
        }
        return lines.joined(separator: "\n")
    }
}
