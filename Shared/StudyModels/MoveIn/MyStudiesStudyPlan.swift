import Foundation
import JSONText

/// What moving one study in from a MyStudies deployment will create: the study's versions, oldest
/// first, each a study document to freeze in turn (the last is the study as its participants see
/// it now), with what does not come over and why. Reading the replies changes nothing; it is the
/// dry run's report and the import's plan alike.
///
/// A deployment serves a study only as it is now, but each activity at every version it still
/// serves; the earlier versions are rebuilt from those designs, so that responses to them are
/// stored against the design they answered. Version `i` holds each activity at its `i`-th
/// version counted from its newest (an activity with fewer versions stays at its first), with the
/// study as it is now otherwise. Those versions are StudyStack's record of the designs; the apps
/// are never served them, and they carry the labels `moved-1`, `moved-2`, ... so that no label
/// the apps hold names one of them.
public struct MyStudiesStudyPlan: Codable, Sendable, Equatable {
    public var studyId: String
    /// `Active`, `Upcoming`, `Paused` or `Closed` at the source.
    public var status: String
    public var versions: [StudyDocument]
    public var findings: [MoveInFinding]
    public var counts: Counts

    public struct Counts: Codable, Sendable, Equatable {
        public var activities = 0
        /// Designs imported, every version of every activity.
        public var activityVersions = 0
        public var steps = 0
        public var eligibilityQuestions = 0
        public var consentSections = 0
        public var comprehensionQuestions = 0
        public var resources = 0
        public var participantProperties = 0
        public var notImported = 0

        public init() {}
    }

    /// The label of the `index`-th (from 1) version rebuilt before the current one.
    public static func historyLabel(_ index: Int) -> String { "moved-\(index)" }

    /// Reads `study` for the app `appId`, in `timeZone` (the zone the source's schedules were
    /// written in: times the apps were sent become local times of it).
    public static func read(_ study: MyStudiesStudyExport.Study, appId: String, timeZone zone: TimeZone) -> MyStudiesStudyPlan {
        read(study, appId: appId, zoneName: zone.identifier, zone: zone)
    }

    /// `read` with the zone's name as the study document will carry it (`UTC` rather than the
    /// `GMT` Foundation may name the same zone).
    public static func read(
        _ study: MyStudiesStudyExport.Study, appId: String, zoneName: String, zone: TimeZone
    ) -> MyStudiesStudyPlan {
        var content = MyStudiesStudyContent(study: study, zone: zone)
        var base = content.document(appId: appId, timeZone: zoneName)
        var findings = content.findings
        let studyId = study.studyId

        var activities: [(history: [StudyActivity], deleted: Bool)] = []
        for (index, item) in Lenient.items(study.activityList?["activities"]).enumerated() {
            if let read = readActivity(item, at: "activityList#/activities/\(index)", study: study, zone: zone, findings: &findings) {
                activities.append(read)
            }
        }
        if study.activityList == nil {
            findings.append(MoveInFinding(
                studyId: studyId, at: "activityList", effect: .notImported, message: "the source did not serve activityList: no activity comes over"))
        }
        // A property an activity or resource counts from was an anchor at the source, which the
        // reply does not say.
        let anchoring = Set(activities.flatMap(\.history).compactMap(\.schedule.anchor?.propertyKey)
            + base.resources.compactMap(\.availability?.anchor?.propertyKey))
        for index in base.participantProperties.indices where anchoring.contains(base.participantProperties[index].key) {
            base.participantProperties[index].useAsAnchor = true
        }
        let currentDesigns = activities.filter { !$0.deleted }.compactMap(\.history.last)
        base.dashboard = MyStudiesDashboardReading.dashboard(
            study.dashboard, activities: currentDesigns, studyId: studyId, findings: &findings)
        let depth = max(activities.map(\.history.count).max() ?? 1, activities.contains { $0.deleted } ? 2 : 1)
        var versions: [StudyDocument] = []
        for index in 0..<depth {
            var document = base
            let isCurrent = index == depth - 1
            document.activities = activities.compactMap { activity in
                if activity.deleted && isCurrent { return nil }
                let behind = depth - 1 - index
                let position = max(0, activity.history.count - 1 - behind)
                return activity.history.isEmpty ? nil : activity.history[position]
            }
            if !isCurrent { document.versionLabel = historyLabel(index + 1) }
            versions.append(document)
        }

        let status = Lenient.text(study.listing["status"]) ?? "Active"
        if status == "Upcoming", versions.count > 1 {
            // No participant has answered an upcoming study: its earlier designs have no responses.
            versions = Array(versions.suffix(1))
            findings.append(MoveInFinding(
                studyId: studyId, at: "studyList#/status", effect: .note,
                message: "the study is upcoming at the source: only its current designs come over"))
        }

        var counts = Counts()
        let current = versions.last ?? base
        counts.activities = Set(activities.compactMap { $0.history.last?.activityId }).count
        let designs = Set(versions.flatMap { $0.activities.map { "\($0.activityId)\u{0}\($0.versionLabel ?? "")" } })
        counts.activityVersions = designs.count
        counts.steps = activities.flatMap(\.history)
            .filter { designs.contains("\($0.activityId)\u{0}\($0.versionLabel ?? "")") }.map { $0.steps.count }.reduce(0, +)
        counts.eligibilityQuestions = current.eligibility.questions.count
        counts.consentSections = current.consent.visualScreens.count
        counts.comprehensionQuestions = current.consent.comprehension?.questions.count ?? 0
        counts.resources = current.resources.count
        counts.participantProperties = current.participantProperties.count
        counts.notImported = findings.filter { $0.effect == .notImported }.count
        return MyStudiesStudyPlan(
            studyId: studyId, status: status, versions: versions,
            findings: findings, counts: counts)
    }

    /// One `activityList` entry with every served design of it, oldest first.
    private static func readActivity(
        _ item: JSONValue, at: String, study: MyStudiesStudyExport.Study, zone: TimeZone, findings: inout [MoveInFinding]
    ) -> (history: [StudyActivity], deleted: Bool)? {
        let studyId = study.studyId
        func found(_ pointer: String, _ effect: MoveInFinding.Effect, _ message: String) {
            findings.append(MoveInFinding(studyId: studyId, at: pointer, effect: effect, message: message))
        }
        guard let activityId = Lenient.text(item["activityId"]) else {
            found(at, .notImported, "an activity needs its activityId")
            return nil
        }
        var reading = MyStudiesScheduleReading(zone: zone, studyId: studyId, at: at)
        let schedule = reading.schedule(of: item)
        findings += reading.findings
        guard let schedule else {
            found(at, .notImported, "\(activityId) is not imported: its schedule could not be read")
            return nil
        }
        let current = Lenient.text(item["activityVersion"]) ?? "1.0"
        let served = study.activities.filter { $0.activityId.unicodeScalars.elementsEqual(activityId.unicodeScalars) }
        var labels = served.map(\.version)
        if !labels.contains(where: { $0.unicodeScalars.elementsEqual(current.unicodeScalars) }) { labels.append(current) }
        labels = ordered(labels, current: current)

        var history: [StudyActivity] = []
        for label in labels {
            let where_ = "activity?activityId=\(activityId)&activityVersion=\(label)"
            guard let reply = served.first(where: { $0.version.unicodeScalars.elementsEqual(label.unicodeScalars) }), let body = reply.reply else {
                let refusal = served.first { $0.version == label }?.refusal.map { ": \($0)" } ?? ""
                found(where_, .notImported, "the source served no design for version \(label) of \(activityId)\(refusal); responses to it are kept but cannot be read against a design")
                continue
            }
            guard StudyActivity.isValidVersionLabel(label) else {
                found(where_, .notImported, "\"\(label)\" is not a version label a design can have here (\(StudyActivity.versionLabelRule))")
                continue
            }
            let design: ActivityDesign
            do {
                design = try ActivityImport.parse(try JSONEncoder().encode(body))
            } catch let error as ActivityImport.ParseError {
                found(where_ + "#" + error.pointer, .notImported, "version \(label) of \(activityId) could not be read: \(error.message)")
                continue
            } catch {
                found(where_, .notImported, "version \(label) of \(activityId) could not be read")
                continue
            }
            let title = Lenient.text(item["title"]) ?? design.metadata.name?.text(for: nil) ?? activityId
            history.append(StudyActivity(
                activityId: activityId, title: .plain(title), type: design.kind, branching: Lenient.flag(item["branching"]) ?? false,
                schedule: schedule, steps: design.steps, versionLabel: label))
        }
        let deleted = Lenient.text(item["state"]) == "deleted"
        if deleted {
            found(at, .note, "\(activityId) was deleted at the source; its designs are kept for its responses and the apps are not offered it")
        }
        if history.isEmpty {
            found(at, .notImported, "\(activityId) is not imported: no design of it was served")
            return nil
        }
        return (history, deleted)
    }

    /// Version labels oldest first: numbered ones by their numbers (`1.9` before `1.10`, `2.0`
    /// after both), the current one last, the rest in the order the source gave them.
    public static func ordered(_ labels: [String], current: String) -> [String] {
        func parts(_ label: String) -> [Int]? {
            let pieces = label.split(separator: ".", omittingEmptySubsequences: false)
            let numbers = pieces.compactMap { WholeNumber.parse($0, in: 0...1_000_000) }
            return numbers.count == pieces.count ? numbers : nil
        }
        var seen: [String] = []
        for label in labels where !seen.contains(where: { $0.unicodeScalars.elementsEqual(label.unicodeScalars) }) {
            seen.append(label)
        }
        let others = seen.filter { !$0.unicodeScalars.elementsEqual(current.unicodeScalars) }
        let numbered = others.compactMap { label in parts(label).map { (label, $0) } }
            .sorted { $0.1.lexicographicallyPrecedes($1.1) }.map(\.0)
        let rest = others.filter { parts($0) == nil }
        return numbered + rest + [current]
    }
}
