import Foundation
import StudyModels

/// The version counters of one frozen version. Versions are integers and only move when their
/// part changed; the apps see them as "1.0", "1.1", ... (never floats).
package struct VersionCounters: Codable, Sendable, Equatable {
    package var study: Int
    package var consent: Int
    package var activities: [String: Int]

    package init(study: Int, consent: Int, activities: [String: Int]) {
        self.study = study
        self.consent = consent
        self.activities = activities
    }

    /// The counters for `document` frozen after `previous` (nil: the first version), with what changed.
    package static func next(
        for document: StudyDocument, after previous: (counters: VersionCounters, document: StudyDocument)?
    ) -> (VersionCounters, StudyChanges) {
        guard let previous else {
            let activities = Dictionary(uniqueKeysWithValues: document.activities.map { ($0.activityId, 1) })
            return (VersionCounters(study: 1, consent: 1, activities: activities),
                    StudyChanges(consent: true, activities: true, resources: true, info: true))
        }
        // A label names a version; it is not a change (`frozen(_:counters:after:history:)`).
        let difference = StudyDocumentDifference(from: previous.document, to: document)
        var activities: [String: Int] = [:]
        for activity in document.activities {
            let current = previous.counters.activities[activity.activityId] ?? 0
            let changed = difference.addedActivities.contains(activity.activityId) || difference.changedActivities.contains(activity.activityId)
            activities[activity.activityId] = changed ? current + 1 : max(current, 1)
        }
        let changes = difference.changes
        let consentChanged = difference.consent
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

    /// How the apps see version `number` of the study whose frozen document is `document`.
    package static func studyLabel(of document: StudyDocument, version number: Int) -> String {
        document.versionLabel ?? label(number)
    }

    /// How the apps see consent version `number` of the frozen `document`.
    package static func consentLabel(of document: StudyDocument, version number: Int) -> String {
        document.consent.versionLabel ?? label(number)
    }

    /// The draft as it is frozen at `counters`: the study's and the consent's labels set so that
    /// each names one version. A label the draft gives is kept unless an earlier version had it;
    /// then, and when the draft gives none after an earlier version's own label, the sequence of
    /// the previous version's label continues (`2.3` → `2.4`); with no label anywhere, versions
    /// stay numbered and the frozen document carries none. The consent keeps its previous label
    /// while it does not change. `history`: every earlier version's labels.
    package static func frozen(
        _ draft: StudyDocument, counters: VersionCounters, history: [PublishedVersionLabels]
    ) -> StudyDocument {
        var frozen = draft
        let previous = history.max { $0.version < $1.version }
        frozen.versionLabel = assign(
            given: draft.versionLabel, number: counters.study, previous: previous.map { ($0.versionLabel, $0.version) },
            taken: Set(history.map { $0.versionLabel ?? label($0.version) }))
        if let previous, previous.consentVersion == counters.consent {
            frozen.consent.versionLabel = previous.consentLabel
        } else {
            frozen.consent.versionLabel = assign(
                given: draft.consent.versionLabel, number: counters.consent,
                previous: previous.map { ($0.consentLabel, $0.consentVersion) },
                taken: Set(history.map { $0.consentLabel ?? label($0.consentVersion) }))
        }
        return frozen
    }

    /// The label for version `number`, or nil where the numbered label is the one: `given`, or
    /// the previous version's own label continued, stepped on past any label already `taken`.
    private static func assign(
        given: String?, number: Int, previous: (label: String?, number: Int)?, taken: Set<String>
    ) -> String? {
        var candidate: String
        if let given {
            candidate = given
        } else if let own = previous?.label {
            candidate = successor(of: own)
        } else {
            candidate = label(number)
        }
        // Each step makes a label no earlier one had, unless one was given out of sequence;
        // past that many steps one is free.
        for _ in 0...taken.count where taken.contains(candidate) { candidate = successor(of: candidate) }
        return candidate == label(number) ? nil : candidate
    }

    /// The versions in `labels` (oldest first) that the apps call `label`: those whose own
    /// label it is, compared by Unicode scalars, or else, when it reads as a number (`1.2`, `3`),
    /// those of that number that have no label of their own.
    package static func find(
        _ label: String, in labels: [PublishedVersionLabels], number: KeyPath<PublishedVersionLabels, Int>,
        own: KeyPath<PublishedVersionLabels, String?>
    ) -> [PublishedVersionLabels] {
        let named = labels.filter { $0[keyPath: own].map { $0.unicodeScalars.elementsEqual(label.unicodeScalars) } ?? false }
        if !named.isEmpty { return named }
        guard let wanted = WireDates.version(fromLabel: label) else { return [] }
        return labels.filter { $0[keyPath: number] == wanted && $0[keyPath: own] == nil }
    }

    /// The label after `label` in its own sequence: the last dotted part counted on (`2.3` →
    /// `2.4`, `7` → `8`); a label not ending in a number gains `.1`. Kept within the labels a
    /// version may have (`StudyActivity.isValidVersionLabel`).
    package static func successor(of label: String) -> String {
        var parts = label.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, let number = WholeNumber.parse(Substring(last), in: 0...numbers.upperBound - 1) {
            parts[parts.count - 1] = String(number + 1)
            let next = parts.joined(separator: ".")
            if StudyActivity.isValidVersionLabel(next) { return next }
        }
        let next = label + ".1"
        return StudyActivity.isValidVersionLabel(next) ? next : "1.\(numbers.upperBound - 1)"
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

/// One frozen version's study and consent numbers and the labels it gave them (nil: numbered).
package struct PublishedVersionLabels: Sendable, Equatable {
    package var version: Int
    package var versionLabel: String?
    package var consentVersion: Int
    package var consentLabel: String?

    package init(version: Int, versionLabel: String?, consentVersion: Int, consentLabel: String?) {
        self.version = version
        self.versionLabel = versionLabel
        self.consentVersion = consentVersion
        self.consentLabel = consentLabel
    }

    /// The labels of the frozen `document` at `counters`.
    package init(_ document: StudyDocument, counters: VersionCounters) {
        self.init(
            version: counters.study, versionLabel: document.versionLabel, consentVersion: counters.consent,
            consentLabel: document.consent.versionLabel)
    }
}

/// Deterministic JSON for comparing parts of documents.
package typealias Canonical = CanonicalJSON

extension CanonicalJSON {
    package static func json(_ value: some Encodable) -> Data { data(value) }
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
            version: version,
            label: version == 0 ? "" : latest.map { VersionCounters.studyLabel(of: $0.document, version: version) } ?? "",
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
