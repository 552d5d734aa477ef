import Foundation
import StudyModels
import Testing

/// `ParticipantAnchors`: the day an anchored schedule counts from, by the kind of anchor.
@Suite struct ParticipantAnchorsTests {
    @Test func eachKindOfAnchorFindsItsDayWithoutCaseAndEnrolmentIsTheEngines() {
        let march1 = GregorianDays.days(year: 2026, month: 3, day: 1)
        let anchors = ParticipantAnchors(answers: ["baseline": ["diagnosisdate": march1]], properties: ["surgerydate": march1 + 22])
        #expect(anchors.day(for: Anchor(source: .activityResponse, activityId: "Baseline", key: "diagnosisDate")) == march1)
        #expect(anchors.day(for: Anchor(source: .activityResponse, activityId: "baseline", key: "other")) == nil)
        #expect(anchors.day(for: Anchor(source: .activityResponse, activityId: "baseline")) == nil, "no key")
        #expect(anchors.day(for: Anchor(source: .participantProperty, propertyKey: "SurgeryDate")) == march1 + 22)
        #expect(anchors.day(for: Anchor(source: .participantProperty)) == nil)
        #expect(anchors.day(for: Anchor(source: .enrollmentDate)) == nil, "the engine takes the day they joined")
        #expect(anchors.day(for: nil) == nil)
    }

    @Test func aDayIsReadFromADateOrTheDateOfADateTimeOnly() {
        #expect(ParticipantAnchors.day("2026-03-01") == GregorianDays.days(year: 2026, month: 3, day: 1))
        #expect(ParticipantAnchors.day("2024-02-29T23:00:00.000+1100") == GregorianDays.days(year: 2024, month: 2, day: 29))
        for bad in ["2026-02-29", "2026-3-01", "2026-03-01 08:00", "0000-01-01", "+202-03-01", "２０２６-03-01", "", "2026-03-0\r\n"] {
            #expect(ParticipantAnchors.day(bad) == nil, "\(bad)")
        }
    }

    @Test func localDatesAndTimesTakeAsciiDigitsOnly() {
        #expect(LocalTimes.date("+202-03-01") == nil && LocalTimes.date("٢٠٢٦-03-01") == nil)
        #expect(LocalTimes.time("+1:00") == nil && LocalTimes.time("-1:00") == nil && LocalTimes.time("01:+5") == nil)
        #expect(LocalTimes.time("01:05") == 3_900 && LocalTimes.time("23:59:59") == 86_399)
    }
}
