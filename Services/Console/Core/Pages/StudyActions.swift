import Foundation
import StudyModels

/// The lifecycle actions as the actions page offers them: only those the study's status allows
/// (the same rule study-metadata enforces, `LifecycleAction.next(from:)`), each explained before
/// the click.
package struct ActionChoice: Sendable {
    package var action: String
    package var label: String
    package var explanation: String
    /// Cannot be undone: the page asks for a confirmation.
    package var irreversible: Bool
    /// What participants are sent when the action is taken, quoted in English; nil when nothing.
    package var notifies: String?

    /// The actions `status` allows, each with the notification it sends to the participants of
    /// the study named `studyName`. (What a study admin's publish or launch in a gateway app
    /// announces to the whole app is decided by study-metadata, and a super-admin's only.)
    package static func available(from status: StudyStatus, studyName: LocalizedText) -> [ActionChoice] {
        LifecycleAction.allCases.filter { $0.next(from: status) != nil }.map { action in
            var choice = choice(action, from: status)
            choice.notifies = LifecycleMessage.message(for: action, studyName: studyName, gatewayApp: false)?.message.text(for: "en")
            return choice
        }
    }

    /// What launching a study in testing does to its testers' data.
    package static let testDataRemoved =
        "Everything the testers recorded is removed first: their enrollments, responses, consents and tokens, and the notifications they were sent."

    /// The action as offered from `status`: launching a study in testing removes what its testers
    /// recorded, so it is explained and confirmed as such.
    package static func choice(_ action: LifecycleAction, from status: StudyStatus) -> ActionChoice {
        var choice = choice(action)
        if action == .launch, status == .testing {
            choice.explanation += " " + testDataRemoved
            choice.irreversible = true
        }
        return choice
    }

    package static func choice(_ action: LifecycleAction) -> ActionChoice {
        switch action {
        case .publish:
            ActionChoice(
                action: action.rawValue, label: "Publish as upcoming",
                explanation: "The study appears in the app as Upcoming; nobody can join and no activity is shown yet. A version is frozen from the draft, and the study's app can no longer change.",
                irreversible: false, notifies: nil)
        case .unpublish:
            ActionChoice(
                action: action.rawValue, label: "Back to draft",
                explanation: "The study leaves the app's list until it is published again.", irreversible: false, notifies: nil)
        case .publishForTesting:
            ActionChoice(
                action: action.rawValue, label: "Publish for testing",
                explanation: "A version is frozen from the draft and served only to the app's test builds (their testing credentials, issued on the app's page); anyone else's app never lists the study. Only testers can join: invite them from the Invitations page. What they record is kept apart, and removed when you launch or end testing.",
                irreversible: false, notifies: nil)
        case .endTesting:
            ActionChoice(
                action: action.rawValue, label: "End testing",
                explanation: "The study leaves the test builds and goes back to draft. \(testDataRemoved)",
                irreversible: true, notifies: nil)
        case .launch:
            ActionChoice(
                action: action.rawValue, label: "Launch",
                explanation: "Participants can join and answer activities. A version is frozen from the draft (refused while something is unfinished or an activity is scheduled entirely in the past). From now on the eligibility type and the app are fixed: participants join by them.",
                irreversible: false, notifies: nil)
        case .publishUpdates:
            ActionChoice(
                action: action.rawValue, label: "Publish updates",
                explanation: "The draft's changes become a new version, and the apps are told what changed and fetch it again (consent, activities, resources, information). Refused when nothing changed.",
                irreversible: false, notifies: nil)
        case .pause:
            ActionChoice(
                action: action.rawValue, label: "Pause",
                explanation: "Participants stay enrolled but cannot answer activities until the study is resumed; no notification is sent while it is paused.",
                irreversible: false, notifies: nil)
        case .resume:
            ActionChoice(
                action: action.rawValue, label: "Resume", explanation: "Activities and notifications start again.",
                irreversible: false, notifies: nil)
        case .deactivate:
            ActionChoice(
                action: action.rawValue, label: "Close the study",
                explanation: "Nobody can join any more, the activities end, and the draft can no longer change. This cannot be undone.",
                irreversible: true, notifies: nil)
        }
    }
}
