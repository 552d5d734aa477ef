import Foundation
import StudyMetadataCore
import StudyModels
import Testing

/// The study's and the consent's version labels as a freeze sets them (`VersionCounters.frozen`):
/// a given label is kept unless an earlier version had it, a label continues its own sequence,
/// and without labels the versions stay numbered.
@Suite struct VersionLabelRulesTests {
    static func document(label: String? = nil, consentLabel: String? = nil) -> StudyDocument {
        var document = StudyDocument(studyId: "MOVED", appId: "APP", name: "Moved")
        document.versionLabel = label
        document.consent.versionLabel = consentLabel
        return document
    }

    static func counters(_ study: Int, consent: Int) -> VersionCounters {
        VersionCounters(study: study, consent: consent, activities: [:])
    }

    @Test func aLabelStepsOnInItsOwnSequence() {
        #expect(VersionCounters.successor(of: "2.3") == "2.4")
        #expect(VersionCounters.successor(of: "7") == "8")
        #expect(VersionCounters.successor(of: "1.9") == "1.10")
        #expect(VersionCounters.successor(of: "3.1.9") == "3.1.10")
        #expect(VersionCounters.successor(of: "beta") == "beta.1")
        // Past the numbers a version may have, the label grows a part instead of overflowing.
        #expect(VersionCounters.successor(of: "1.999999") == "1.999999.1")
        #expect(StudyActivity.isValidVersionLabel(VersionCounters.successor(of: "1.999999")))
    }

    @Test func withoutLabelsVersionsStayNumbered() {
        let first = VersionCounters.frozen(Self.document(), counters: Self.counters(1, consent: 1), history: [])
        #expect(first.versionLabel == nil && first.consent.versionLabel == nil)
        let history = [PublishedVersionLabels(first, counters: Self.counters(1, consent: 1))]
        let second = VersionCounters.frozen(Self.document(), counters: Self.counters(2, consent: 2), history: history)
        #expect(second.versionLabel == nil && second.consent.versionLabel == nil)
        // A label equal to the numbered one is not stored as a label of its own.
        let numbered = VersionCounters.frozen(Self.document(label: "1.1"), counters: Self.counters(2, consent: 1), history: history)
        #expect(numbered.versionLabel == nil)
    }

    @Test func aGivenLabelIsKeptAndThenContinued() {
        let moved = VersionCounters.frozen(
            Self.document(label: "2.3", consentLabel: "1.4"), counters: Self.counters(1, consent: 1), history: [])
        #expect(moved.versionLabel == "2.3" && moved.consent.versionLabel == "1.4")
        var history = [PublishedVersionLabels(moved, counters: Self.counters(1, consent: 1))]

        // The draft still says 2.3 and the consent did not change: 2.4, and the consent keeps 1.4
        // even where the draft gives the consent another label.
        let next = VersionCounters.frozen(
            Self.document(label: "2.3", consentLabel: "9"), counters: Self.counters(2, consent: 1), history: history)
        #expect(next.versionLabel == "2.4" && next.consent.versionLabel == "1.4")
        history.append(PublishedVersionLabels(next, counters: Self.counters(2, consent: 1)))

        // The label cleared from the draft: the sequence goes on rather than back to 1.2.
        let cleared = VersionCounters.frozen(Self.document(), counters: Self.counters(3, consent: 2), history: history)
        #expect(cleared.versionLabel == "2.5" && cleared.consent.versionLabel == "1.5")
        history.append(PublishedVersionLabels(cleared, counters: Self.counters(3, consent: 2)))

        // A label an earlier version had is stepped past every label already taken.
        let reused = VersionCounters.frozen(Self.document(label: "2.4"), counters: Self.counters(4, consent: 2), history: history)
        #expect(reused.versionLabel == "2.6")
    }

    @Test func aLabelIsFoundByItsScalarsOrItsNumber() {
        let labels = [
            PublishedVersionLabels(version: 1, versionLabel: nil, consentVersion: 1, consentLabel: nil),
            PublishedVersionLabels(version: 2, versionLabel: "2.3", consentVersion: 1, consentLabel: nil),
            PublishedVersionLabels(version: 3, versionLabel: "1.2", consentVersion: 2, consentLabel: "1.4"),
        ]
        let study = { (label: String) in
            VersionCounters.find(label, in: labels, number: \.version, own: \.versionLabel).map(\.version)
        }
        #expect(study("2.3") == [2])
        #expect(study("1.0") == [1])
        // Version 2's numbered label is not its label; 1.2 is version 3's own.
        #expect(study("1.1") == [])
        #expect(study("1.2") == [3])
        #expect(study("9.9") == [])
        let consent = { (label: String) in
            VersionCounters.find(label, in: labels, number: \.consentVersion, own: \.consentLabel).map(\.version)
        }
        #expect(consent("1.0") == [1, 2])
        #expect(consent("1.4") == [3])
        #expect(consent("1.1") == [])
    }
}
