import Foundation
import InMemoryPorts
import Logging
import RegistrationCore
import StudyModels
import Testing

/// `TestRunCleanup` against in-memory records and files: a study's rows written up to the end of
/// its test run go, with the signed PDFs they named; later rows and other studies stay; a PDF that
/// cannot be removed does not stop the others.
@Suite struct TestRunCleanupRulesTests {
    @Test func onlyTheTestRunsRowsAndTheirPDFsGo() async throws {
        let ended = Date(timeIntervalSince1970: 1_800_000_000)
        let before = ended - 60, after = ended + 60
        let records = InMemoryTestRunRecords([
            .init(studyId: "SLEEP", kind: .studyState, writtenAt: before),
            .init(studyId: "SLEEP", kind: .activityState, writtenAt: before),
            .init(studyId: "SLEEP", kind: .activityState, writtenAt: ended),
            .init(studyId: "SLEEP", kind: .consent(pdfKey: "tester.pdf"), writtenAt: before),
            .init(studyId: "SLEEP", kind: .consent(pdfKey: "stuck.pdf"), writtenAt: before),
            .init(studyId: "SLEEP", kind: .consent(pdfKey: nil), writtenAt: before),
            .init(studyId: "SLEEP", kind: .invitation, writtenAt: before),
            .init(studyId: "SLEEP", kind: .studyState, writtenAt: after),
            .init(studyId: "SLEEP", kind: .consent(pdfKey: "participant.pdf"), writtenAt: after),
            .init(studyId: "DIARY", kind: .consent(pdfKey: "diary.pdf"), writtenAt: before),
        ])
        let files = InMemoryConsentFiles(
            ["tester.pdf": Data("a".utf8), "stuck.pdf": Data("b".utf8), "participant.pdf": Data("c".utf8), "diary.pdf": Data("d".utf8)],
            failing: ["stuck.pdf"])
        let cleanup = TestRunCleanup(records: records, consents: files, logger: Logger(label: "test"))
        let removed = try await cleanup.testingEnded(StudyTestingEnded(studyId: "SLEEP", endedAt: ended))
        #expect(removed == TestRunRemoval(studyStates: 1, activityStates: 2, consents: 3, invitations: 1))
        #expect(files.keys == ["stuck.pdf", "participant.pdf", "diary.pdf"])
        #expect(records.remaining.count == 3)
        #expect(records.audited == ["study.test_data_removed SLEEP"])
        // A repeated delivery finds nothing more to remove.
        let again = try await cleanup.testingEnded(StudyTestingEnded(studyId: "SLEEP", endedAt: ended))
        #expect(again == TestRunRemoval(studyStates: 0, activityStates: 0, consents: 0, invitations: 0))
        #expect(records.remaining.count == 3)
    }
}
