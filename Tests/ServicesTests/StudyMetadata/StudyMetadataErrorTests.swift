import Foundation
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyModels
import Testing

/// study-metadata's one map from what its core refuses to what the admin API answers, and the
/// draft editor's rule for where an activity's problems point; no I/O.
@Suite struct StudyMetadataErrorTests {
    @Test func eachRefusalHasItsStatusAndCode() {
        let problem = ValidationProblem(pointer: "/name", message: "is required")
        let cases: [(StudyMetadataError, Int, String)] = [
            (.wrongCredentials, 401, "unauthenticated"),
            (.locked(until: Date(timeIntervalSince1970: 0)), 403, "locked"),
            (.invitationInvalid, 410, "invitation_invalid"),
            (.weakPassword("too short"), 400, "invalid_request"),
            (.notAnEmailAddress, 400, "invalid_request"),
            (.adminExists, 409, "conflict"),
            (.notificationExists(appId: "A", notificationId: "n"), 409, "conflict"),
            (.tooManyKeys, 409, "conflict"),
            (.noKey, 404, "not_found"),
            (.noAdmin("a"), 404, "not_found"),
            (.noAdminWithEmail("a@example.org"), 404, "not_found"),
            (.noRole(adminId: "a", studyId: "S"), 404, "not_found"),
            (.editorRequired(studyId: "S"), 403, "forbidden"),
            (.noStudy("S"), 404, "not_found"),
            (.noApp("A"), 404, "not_found"),
            (.noVersion(studyId: "S", version: 2), 404, "not_found"),
            (.invalid([problem], subject: .studyDocument), 422, "validation_failed"),
            (.studyExists(studyId: "S"), 412, "study_exists"),
            (.draftChanged(studyId: "S", current: 4), 412, "draft_changed"),
            (.closed(studyId: "S"), 409, "conflict"),
            (.studyIdTaken(studyId: "s", existing: "S"), 409, "conflict"),
            (.changedMeanwhile(studyId: "S"), 409, "conflict"),
            (.activityNotFromAssessment(activityId: "a"), 409, "conflict"),
            (.actionNotAllowed(action: .launch, current: .deactivated), 409, "conflict"),
            (.nothingToPublish, 409, "conflict"),
            (.appIdTaken("A"), 409, "conflict"),
            (.orgSpelledOtherwise(orgId: "org", existing: "ORG"), 409, "conflict"),
        ]
        #expect(cases.count == 27)
        for (error, status, code) in cases {
            #expect(error.apiError.status.code == status, "\(error)")
            #expect(error.apiError.code == code, "\(error)")
            #expect(error.apiError.message == error.message, "\(error)")
        }
    }

    @Test func problemsAreCountedAndSaidWhereTheyPoint() {
        let one = [ValidationProblem(pointer: "/a", message: "x")]
        let two = one + [ValidationProblem(pointer: "/b", message: "y")]
        #expect(StudyMetadataError.invalid(one, subject: .activity).message == "the activity has 1 problem")
        #expect(StudyMetadataError.invalid(two, subject: .schemaProtocol).message == "the protocol has 2 problems")
        #expect(
            StudyMetadataError.invalid(two, subject: .draftMadeFrom("assessment")).message
                == "the draft made from the assessment has 2 problems (located in the study document)")
        let error = StudyMetadataError.invalid(two, subject: .studyDocument).apiError
        #expect(error.problems?.map(\.pointer) == ["/a", "/b"])
    }

    @Test func aSaveOverNoStudySaysSoRatherThanThatTheDraftChanged() {
        #expect(StudyMetadataError.draftChanged(studyId: "S", current: 0).message.contains("does not exist"))
        #expect(StudyMetadataError.draftChanged(studyId: "S", current: 3).message.contains("revision 3"))
    }

    @Test func anActivitysProblemsPointIntoItAndTheDraftsOthersStayInTheDraft() {
        let problems = [
            ValidationProblem(pointer: "/activities/2", message: "whole"),
            ValidationProblem(pointer: "/activities/2/steps/0/key", message: "step"),
            ValidationProblem(pointer: "/activities/20/title", message: "another activity"),
            ValidationProblem(pointer: "/name", message: "the study's"),
        ]
        let located = DraftEditing.locate(problems, activityIndex: 2)
        #expect(located.map(\.pointer) == ["/activity", "/activity/steps/0/key", "/activities/20/title", "/name"])
        #expect(located.map(\.message) == problems.map(\.message))
    }
}
