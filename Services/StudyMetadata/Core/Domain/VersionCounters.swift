import Foundation
import StudyModels

/// The version counters of one frozen version. Versions are integers and only move when their
/// part changed; the apps see them as "1.0", "1.1", ... (never floats).
package struct VersionCounters: Codable, Sendable, Equatable {
    package var study: Int
    package var consent: Int
    package var activities: [String: Int]

    /// The counters for `document` frozen after `previous` (nil: the first version), with what changed.
    package static func next(
        for document: StudyDocument, after previous: (counters: VersionCounters, document: StudyDocument)?
    ) -> (VersionCounters, StudyChanges) {
        guard let previous else {
            let activities = Dictionary(uniqueKeysWithValues: document.activities.map { ($0.activityId, 1) })
            return (VersionCounters(study: 1, consent: 1, activities: activities),
                    StudyChanges(consent: true, activities: true, resources: true, info: true))
        }
        let old = previous.document
        let consentChanged = Canonical.json(document.consent) != Canonical.json(old.consent)
        var activities: [String: Int] = [:]
        var activitiesChanged = Set(old.activities.map(\.activityId)) != Set(document.activities.map(\.activityId))
        for activity in document.activities {
            let before = old.activities.first { $0.activityId == activity.activityId }
            let current = previous.counters.activities[activity.activityId] ?? 0
            if let before, Canonical.json(before) == Canonical.json(activity) {
                activities[activity.activityId] = max(current, 1)
            } else {
                activities[activity.activityId] = current + 1
                activitiesChanged = true
            }
        }
        let resourcesChanged = Canonical.json(document.resources) != Canonical.json(old.resources)
        // What is left once consent, activities and resources are set aside is the study info.
        var oldInfo = old, newInfo = document
        oldInfo.consent = Consent(); newInfo.consent = Consent()
        oldInfo.activities = []; newInfo.activities = []
        oldInfo.resources = []; newInfo.resources = []
        let infoChanged = Canonical.json(oldInfo) != Canonical.json(newInfo)
        let changes = StudyChanges(
            consent: consentChanged, activities: activitiesChanged, resources: resourcesChanged, info: infoChanged)
        return (VersionCounters(
                    study: previous.counters.study + (changes.any ? 1 : 0),
                    consent: previous.counters.consent + (consentChanged ? 1 : 0),
                    activities: activities),
                changes)
    }

    /// Every version number a study, its consent or an activity can reach.
    package static let numbers = StudyActivity.versionNumbers

    /// How the apps see a version number: 1 → "1.0", 2 → "1.1", 11 → "1.10".
    package static func label(_ version: Int) -> String { "1.\(version - 1)" }

    /// How the apps see version `number` of `activity`: the label its admin gave, else numbered.
    package static func label(of activity: StudyActivity, version number: Int) -> String {
        activity.versionLabel ?? label(number)
    }

    /// Labels of the draft's activities that an earlier, different design of the same activity
    /// already had (`history`: every published activity version's number and label): a response
    /// names its design by label, so one label must name one design.
    package static func reusedLabels(
        in document: StudyDocument, counters: VersionCounters, history: [PublishedActivityLabel]
    ) -> [ValidationProblem] {
        var problems: [ValidationProblem] = []
        for (index, activity) in document.activities.enumerated() {
            let number = counters.activities[activity.activityId] ?? 1
            let label = label(of: activity, version: number)
            if let earlier = history.first(where: {
                $0.activityId == activity.activityId && $0.label == label && $0.activityVersion != number
            }) {
                problems.append(ValidationProblem(
                    pointer: "/activities/\(index)/versionLabel",
                    message: "version \(label) of \(activity.activityId) was published with another design (study version \(earlier.studyVersion)); give this design a new versionLabel"))
            }
        }
        return problems
    }
}

/// One activity version as published: which study version froze it, its number and its label.
package struct PublishedActivityLabel: Sendable, Equatable {
    package var studyVersion: Int
    package var activityId: String
    package var activityVersion: Int
    package var label: String

    package init(studyVersion: Int, activityId: String, activityVersion: Int, label: String) {
        self.studyVersion = studyVersion
        self.activityId = activityId
        self.activityVersion = activityVersion
        self.label = label
    }
}

/// Deterministic JSON for comparing parts of documents.
package enum Canonical {
    package static func json(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)) ?? Data()
    }
}

extension StudyEvent {
    /// The event for a study in `status` whose newest version is `latest` (nil before the first publish).
    package static func make(
        studyId: String, appId: String, orgId: String, status: StudyStatus,
        latest: (counters: VersionCounters, document: StudyDocument)?, action: String?, at: Date
    ) -> StudyEvent {
        let version = latest?.counters.study ?? 0
        return StudyEvent(
            studyId: studyId, appId: appId, orgId: orgId, status: Status(rawValue: status.rawValue) ?? .preLaunch,
            version: version, label: version == 0 ? "" : VersionCounters.label(version),
            consentVersion: latest?.counters.consent ?? 0,
            activities: (latest?.document.activities ?? []).map { activity in
                let number = latest?.counters.activities[activity.activityId] ?? 1
                return ActivityVersion(
                    activityId: activity.activityId, version: number, label: VersionCounters.label(of: activity, version: number),
                    type: activity.kind.rawValue)
            },
            participantProperties: latest?.document.participantProperties ?? [], action: action, at: at,
            arms: latest?.document.arms, source: latest?.document.source)
    }
}
