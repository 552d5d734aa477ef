import ConsoleCore
import Testing

/// The audit log and the states in a coordinator's words: every lifecycle action and study
/// event has words of its own, a new one is said from its name, and details are said plainly.
@Suite struct AuditWordsTests {
    @Test func everyLifecycleActionAndStudyEventHasWords() {
        let recorded = [
            "study.created", "study.draft_saved", "study.activity_saved", "study.assessment_imported", "study.schema_imported",
            "study.file_uploaded", "study.message_sent", "study.moved_in", "study.role_granted", "study.role_revoked",
            "study.checklist_ticked", "study.checklist_unticked",
        ] + ["publish", "unpublish", "publish-for-testing", "end-testing", "launch", "publish-updates", "pause", "resume", "deactivate"]
            .map { "study.\($0)" }
        #expect(recorded.count == 21)
        for action in recorded {
            let words = AuditWords.action(action)
            #expect(!words.contains(".") && !words.contains("_") && !words.hasPrefix("Study:"), "\(action) → \(words)")
        }
        #expect(AuditWords.action("study.launch") == "Launched the study")
        #expect(AuditWords.action("study.sealed_export") == "Study: sealed export", "a new action is said from its name")
        #expect(AuditWords.action("consent.history_exported") == "Consent: history exported")
    }

    @Test func detailsAreSaidPlainly() {
        #expect(AuditWords.details(["item": "irbApproval"]) == "item: IRB review completed")
        #expect(AuditWords.details(["label": "1.2", "reconsent": "true", "testDataRemoved": "true"])
            == "version: 1.2; everyone signs again: yes; testers' data removed: yes")
        #expect(AuditWords.details(["notificationId": "m-1", "someNewThing": "x"]) == "message id: m-1; some new thing: x")
        #expect(AuditWords.details([:]) == "")
    }

    @Test func statesAreSaidInWords() {
        #expect(StatusNames.invitation("invited") == "Invited, not joined yet")
        #expect(StatusNames.invitation("enrolled") == "Joined")
        #expect(StatusNames.consent("completed") == "Signed")
        #expect(StatusNames.response("error") == "Could not be stored")
        #expect(StatusNames.response("forwarded") == "Stored and forwarded")
        for state in ["invited", "enrolled", "withdrawn", "revoked", "expired"] {
            #expect(StatusNames.invitation(state) != state, "\(state)")
        }
    }
}
