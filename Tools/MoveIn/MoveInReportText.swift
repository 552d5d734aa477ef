import StudyModels

/// A move-in report as `studystack-import` prints it: per study, where it stands, the versions and
/// designs that come over, the counts, then every finding grouped by what it means.
public enum MoveInReportText {
    public static func render(_ report: StudyMoveInReport) -> String {
        var lines: [String] = []
        lines.append("\(report.dryRun ? "Dry run" : "Import") of \(report.studies.count) studies from \(report.source) (read \(report.readAt))")
        for study in report.studies {
            lines.append("")
            let state: String =
                switch study.state {
                case .new: report.dryRun ? "new: will be created" : "created"
                case .partly: report.dryRun ? "partly here: the import goes on from version \(study.versionsHere + 1)" : "completed"
                case .imported: "already imported: nothing changes"
                case .differs: "a different study of this id is here: left as it is"
                case .refused: "cannot be imported"
                }
            lines.append("\(study.studyId) (\(study.sourceStatus) at the source): \(state)")
            lines.append("  versions: \(study.versions.joined(separator: ", ")) (\(study.versionsHere) of \(study.versions.count) here)")
            for activity in study.activities {
                lines.append("  activity \(activity.activityId): \(activity.versions.joined(separator: ", "))")
            }
            let counts = study.counts
            lines.append(
                "  \(counts.activities) activities, \(counts.activityVersions) designs, \(counts.steps) steps, "
                    + "\(counts.eligibilityQuestions) eligibility questions, \(counts.consentSections) consent sections, "
                    + "\(counts.comprehensionQuestions) comprehension questions, \(counts.resources) resources, "
                    + "\(counts.participantProperties) participant properties; \(counts.notImported) not imported")
            for (effect, heading) in [
                (MoveInFinding.Effect.notImported, "not imported"), (.changed, "changed"), (.note, "to check"),
            ] {
                let found = study.findings.filter { $0.effect == effect }
                guard !found.isEmpty else { continue }
                lines.append("  \(heading):")
                for finding in found { lines.append("    \(finding.at): \(finding.message)") }
            }
        }
        return lines.joined(separator: "\n")
    }
}
