import Foundation

/// What changed between two versions of a study's document, part by part: what freezing the
/// newer one changes for participants (study-metadata's version counters, and the console's
/// summary before `publish-updates`). A label names a version; it is not a change.
public struct StudyDocumentDifference: Sendable, Equatable {
    public var consent: Bool
    public var resources: Bool
    /// Anything else: listing, overview, eligibility, settings, notifications, dashboard.
    public var info: Bool
    /// Activities by id, in the newer document's order (removed ones in the older's).
    public var addedActivities: [String]
    public var changedActivities: [String]
    public var removedActivities: [String]

    public var activities: Bool { !addedActivities.isEmpty || !changedActivities.isEmpty || !removedActivities.isEmpty }
    public var any: Bool { consent || resources || info || activities }

    /// The changes as a version records them.
    public var changes: StudyChanges {
        StudyChanges(consent: consent, activities: activities, resources: resources, info: info)
    }

    public init(from old: StudyDocument, to new: StudyDocument) {
        var old = old, new = new
        old.versionLabel = nil; new.versionLabel = nil
        old.consent.versionLabel = nil; new.consent.versionLabel = nil
        consent = CanonicalJSON.data(new.consent) != CanonicalJSON.data(old.consent)
        resources = CanonicalJSON.data(new.resources) != CanonicalJSON.data(old.resources)
        let before = Dictionary(old.activities.map { ($0.activityId, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.activities.map(\.activityId))
        addedActivities = new.activities.filter { before[$0.activityId] == nil }.map(\.activityId)
        changedActivities = new.activities.filter { activity in
            before[activity.activityId].map { CanonicalJSON.data($0.asPublished) != CanonicalJSON.data(activity.asPublished) } ?? false
        }.map(\.activityId)
        removedActivities = old.activities.filter { !after.contains($0.activityId) }.map(\.activityId)
        // What is left once consent, activities and resources are set aside is the study info.
        var oldInfo = old, newInfo = new
        oldInfo.consent = Consent(); newInfo.consent = Consent()
        oldInfo.activities = []; newInfo.activities = []
        oldInfo.resources = []; newInfo.resources = []
        // The team's own records of the study (WCP's basic information the apps are never
        // served) change no version.
        oldInfo.fullName = nil; newInfo.fullName = nil
        oldInfo.supportEmail = nil; newInfo.supportEmail = nil
        oldInfo.estimatedDuration = nil; newInfo.estimatedDuration = nil
        oldInfo.dataPartners = nil; newInfo.dataPartners = nil
        info = CanonicalJSON.data(oldInfo) != CanonicalJSON.data(newInfo)
    }
}

/// Deterministic JSON for comparing parts of documents.
public enum CanonicalJSON {
    public static func data(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)) ?? Data()
    }
}

extension StudyActivity {
    /// The activity as a version compares it: without the team's own mark of a placeholder
    /// schedule, which participants never see.
    var asPublished: StudyActivity {
        var activity = self
        activity.placeholderSchedule = nil
        return activity
    }
}
