import Foundation
import Logging
import ServiceKit
import StudyModels

/// Moves studies in from a MyStudies deployment (docs/moving-in.md): what its study-metadata API
/// served (`MyStudiesStudyExport`) becomes the same studies here, each version frozen in turn as
/// the apps saw it, the labels kept, then the study brought to the status it has at the source.
///
/// A dry run reads and reports and writes nothing. The import is idempotent and resumable: each
/// version is frozen in its own transaction, and a run first compares what is here with the
/// plan, so a second run changes nothing and a run after an interrupted one goes on from the
/// first version that is missing. A study of the same id that is not what the source has is
/// left as it is and reported.
package struct StudyMoveIns: Sendable {
    package let drafts: DraftEditing
    package let lifecycle: StudyLifecycleActions
    package let studies: any MovedStudyReading
    package let logger: Logger

    package init(drafts: DraftEditing, lifecycle: StudyLifecycleActions, studies: any MovedStudyReading, logger: Logger) {
        self.drafts = drafts
        self.lifecycle = lifecycle
        self.studies = studies
        self.logger = logger
    }

    /// Reads `export` into studies of the app `appId`, whose schedules were written in `timeZone`,
    /// and (unless `dryRun`) imports them. Only a super-admin moves studies in.
    package func run(
        _ export: MyStudiesStudyExport, appId: String, timeZone: String, dryRun: Bool, by admin: AuthenticatedAdmin,
        now: Date = Date()
    ) async throws -> StudyMoveInReport {
        guard admin.role == .superAdmin else { throw StudyMetadataError.moveInNeedsSuperAdmin }
        guard try await drafts.apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        guard let zone = TimeZone(identifier: timeZone) else {
            throw StudyMetadataError.invalid(
                [ValidationProblem(pointer: "", message: "timeZone: \"\(timeZone)\" is not an IANA time zone (for example America/New_York)")],
                subject: .moveIn)
        }
        var reports: [StudyMoveInReport.Study] = []
        var seen: [String] = []
        for study in export.studies {
            let plan = MyStudiesStudyPlan.read(study, appId: appId, zoneName: timeZone, zone: zone)
            if seen.contains(where: { $0.lowercased() == plan.studyId.lowercased() }) {
                reports.append(report(plan, state: .refused, here: 0, extra: [MoveInFinding(
                    studyId: plan.studyId, at: "studyList", effect: .notImported,
                    message: "the export lists \(plan.studyId) twice; only the first is imported")]))
                continue
            }
            seen.append(plan.studyId)
            reports.append(try await move(plan, dryRun: dryRun, by: admin, source: export.source))
        }
        return StudyMoveInReport(source: export.source, readAt: export.readAt, dryRun: dryRun, studies: reports)
    }

    /// Where a study stands here against its plan.
    private struct Standing {
        var state: StudyMoveInReport.Study.State
        /// How many of the plan's versions are here as planned.
        var here: Int
        var status: StudyStatus?
        var why: String?
    }

    private func move(
        _ plan: MyStudiesStudyPlan, dryRun: Bool, by admin: AuthenticatedAdmin, source: String
    ) async throws -> StudyMoveInReport.Study {
        // Every version is checked before any is frozen: an earlier design the study model refuses
        // would otherwise stop the import half way.
        let problems = plan.versions.flatMap { document in
            StudyValidator.validate(document).map { (label: document.versionLabel ?? "1.0", problem: $0) }
        }
        guard !plan.versions.isEmpty, problems.isEmpty else {
            return report(plan, state: .refused, here: 0, extra: problems.map { found in
                MoveInFinding(
                    studyId: plan.studyId, at: "version \(found.label)#\(found.problem.pointer)", effect: .notImported,
                    message: "the study would not be valid here: \(found.problem.message)")
            })
        }
        let standing = try await standing(of: plan)
        var extra: [MoveInFinding] = []
        if let why = standing.why {
            extra.append(MoveInFinding(studyId: plan.studyId, at: "studyList", effect: .notImported, message: why))
        }
        guard !dryRun, standing.state == .new || standing.state == .partly else {
            return report(plan, state: standing.state, here: standing.here, extra: extra)
        }
        let target = Self.status(plan.status)
        let actor = admin.email
        var here = standing.here
        var status = standing.status ?? .preLaunch
        for index in here..<plan.versions.count {
            let document = plan.versions[index]
            if index == 0, standing.status == nil {
                _ = try await drafts.create(document, madeFrom: "MyStudies study", by: admin)
            } else {
                let access = try await drafts.authorize(admin, studyId: plan.studyId)
                _ = try await drafts.save(document, with: access, expecting: .none)
            }
            let action: LifecycleAction = status == .preLaunch ? (target == .upcoming ? .publish : .launch) : .publishUpdates
            status = try await lifecycle.apply(
                action, studyId: plan.studyId, by: actor, mayAnnounceToApp: false, movingIn: true).status
            here = index + 1
        }
        for action in Self.actions(from: status, to: target) {
            status = try await lifecycle.apply(action, studyId: plan.studyId, by: actor, mayAnnounceToApp: false).status
        }
        try await drafts.transactions.run { work in
            try await work.record(
                actor: actor, action: "study.moved_in", studyId: plan.studyId,
                details: [
                    "source": source, "versions": String(plan.versions.count),
                    "activityVersions": String(plan.counts.activityVersions), "notImported": String(plan.counts.notImported),
                ])
        }
        logger.info("moved a study in", metadata: ["study_id": "\(plan.studyId)", "versions": "\(here)"])
        return report(plan, state: standing.state, here: here, extra: extra)
    }

    /// What is here of the plan's study: nothing, the first versions as planned, all of them, or
    /// a study the plan is not.
    private func standing(of plan: MyStudiesStudyPlan) async throws -> Standing {
        guard let found = try await studies.movedStudy(studyId: plan.studyId) else {
            return Standing(state: .new, here: 0)
        }
        let differs = { (why: String) in Standing(state: .differs, here: 0, status: found.status, why: why) }
        guard found.appId == plan.versions[0].appId else {
            return differs("a study \(plan.studyId) is here in the app \(found.appId); it is left as it is")
        }
        guard found.frozen.count <= plan.versions.count else {
            return differs("\(plan.studyId) here has more versions than the source; it is left as it is")
        }
        for (index, frozen) in found.frozen.enumerated() where !Self.same(frozen, plan.versions[index], version: index + 1) {
            return differs("version \(index + 1) of \(plan.studyId) here is not the source's; the study is left as it is")
        }
        if found.frozen.isEmpty {
            // Made by an import that stopped before its first version, or someone else's draft.
            guard try await drafts.studies.draft(studyId: plan.studyId).flatMap({ draft in
                try? JSONDecoder().decode(StudyDocument.self, from: Data(draft.json.utf8))
            }).map({ Canonical.json($0) == Canonical.json(plan.versions[0]) }) == true else {
                return differs("a study \(plan.studyId) that was never published is here; it is left as it is")
            }
        }
        let complete = found.frozen.count == plan.versions.count && found.status == Self.status(plan.status)
        return Standing(state: complete ? .imported : .partly, here: found.frozen.count, status: found.status)
    }

    /// Whether version `number` frozen here is the plan's `planned` version: the same document,
    /// seen under the same labels (a freeze stores no label where the numbered one is the label).
    static func same(_ frozen: (document: StudyDocument, consentVersion: Int), _ planned: StudyDocument, version number: Int) -> Bool {
        var (here, there) = (frozen.document, planned)
        let labels = (
            here: (VersionCounters.studyLabel(of: here, version: number), VersionCounters.consentLabel(of: here, version: frozen.consentVersion)),
            there: (VersionCounters.studyLabel(of: there, version: number), VersionCounters.consentLabel(of: there, version: frozen.consentVersion)))
        guard labels.here == labels.there else { return false }
        (here.versionLabel, there.versionLabel) = (nil, nil)
        (here.consent.versionLabel, there.consent.versionLabel) = (nil, nil)
        return Canonical.json(here) == Canonical.json(there)
    }

    /// The status here of a study in `sourceStatus` at the source.
    static func status(_ sourceStatus: String) -> StudyStatus {
        switch sourceStatus {
        case "Upcoming": .upcoming
        case "Paused": .paused
        case "Closed": .deactivated
        default: .active
        }
    }

    /// The lifecycle actions from `status` to `target` once every version is frozen.
    static func actions(from status: StudyStatus, to target: StudyStatus) -> [LifecycleAction] {
        switch (status, target) {
        case (.active, .paused): [.pause]
        case (.active, .deactivated), (.paused, .deactivated), (.upcoming, .deactivated): [.deactivate]
        case (.paused, .active): [.resume]
        default: []
        }
    }

    private func report(
        _ plan: MyStudiesStudyPlan, state: StudyMoveInReport.Study.State, here: Int, extra: [MoveInFinding]
    ) -> StudyMoveInReport.Study {
        var designs: [StudyMoveInReport.Activity] = []
        for document in plan.versions {
            for activity in document.activities {
                let label = activity.versionLabel ?? "1.0"
                if let index = designs.firstIndex(where: { $0.activityId == activity.activityId }) {
                    if !designs[index].versions.contains(label) { designs[index].versions.append(label) }
                } else {
                    designs.append(.init(activityId: activity.activityId, versions: [label]))
                }
            }
        }
        var counts = plan.counts
        counts.notImported += extra.filter { $0.effect == .notImported }.count
        return StudyMoveInReport.Study(
            studyId: plan.studyId, sourceStatus: plan.status, state: state,
            versions: plan.versions.map { $0.versionLabel ?? "1.0" }, versionsHere: here, activities: designs, counts: counts,
            findings: plan.findings + extra)
    }
}
