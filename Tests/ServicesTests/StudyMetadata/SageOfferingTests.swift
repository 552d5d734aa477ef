import JSONText
import StudyMetadataHTTP
import StudyModels
import Testing

/// The MyStudies apps are sent an activity made from a Sage assessment only when they can run it.
@Suite struct SageOfferingTests {
    @Test func aSageOnlyActivityIsNotOfferedToTheMyStudiesApps() {
        var activity = StudyActivity(
            activityId: "walk", title: "Walk", schedule: Schedule(frequency: .ongoing),
            steps: [ActivityStep(type: .instruction, resultType: "", key: "intro")])
        #expect(WCPRoutes.isOffered(activity, on: .ios))
        activity.assessment = SageAssessment(document: .object([:]), sageOnly: [])
        #expect(WCPRoutes.isOffered(activity, on: .ios))
        #expect(WCPRoutes.isOffered(activity, on: .android))
        activity.assessment = SageAssessment(document: .object([:]), sageOnly: [ValidationProblem(pointer: "/steps/0/type", message: "a countdown step")])
        #expect(!WCPRoutes.isOffered(activity, on: .ios))
        #expect(!WCPRoutes.isOffered(activity, on: .android))
    }
}
