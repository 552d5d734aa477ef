import ConsoleCore
import Foundation
import StudyModels
import Testing

/// A participant's page says where registration cut their runs short (docs/security.md,
/// Budgets), and says nothing when it did not.
@Suite struct RunTimelineCutTests {
    static func reply(cutAt: String?) -> ParticipantRunsReply {
        ParticipantRunsReply(
            timeZone: "UTC", timeZoneSource: "study", from: "2026-01-01T00:00:00+00:00", to: "2026-12-31T00:00:00+00:00",
            runs: [.init(activityId: "a", runId: 1, start: "2026-01-01T08:00:00+00:00", end: nil, state: "missed", completedBy: [])],
            cutAt: cutAt)
    }

    @Test func aCutReplySaysWhereTheCountsStop() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let shown = RunTimeline.Shown(start: nil, now: now)
        let cut = RunTimeline(reply: Self.reply(cutAt: "2026-02-04T10:30:00+00:00"), app: [], now: now, shown: shown, pageHref: "/p")
        #expect(cut.cutNote?.contains("stop at Wed 4 Feb 10:30") == true, "\(cut.cutNote ?? "-")")
        let whole = RunTimeline(reply: Self.reply(cutAt: nil), app: [], now: now, shown: shown, pageHref: "/p")
        #expect(whole.cutNote == nil)
    }
}
