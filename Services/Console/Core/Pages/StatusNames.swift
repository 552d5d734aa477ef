/// The apps report a participant's place in a study, and in each activity, in the original
/// servers' words (`yetToJoin`, `inProgress`); the console says them in a coordinator's. What it
/// does not know is shown as sent.
package enum StatusNames {
    /// A participant's status in a study (`ParticipantList.statuses`).
    package static func participant(_ status: String) -> String {
        switch status {
        case "yetToJoin": "Not joined yet"
        case "inProgress": "Taking part"
        case "completed": "Completed"
        case "notEligible": "Not eligible"
        case "Withdrawn", "withdrawn": "Withdrawn"
        default: status
        }
    }

    /// A participant's state in one activity.
    package static func activity(_ state: String) -> String {
        switch state {
        case "yetToJoin": "Not started"
        case "inProgress": "In progress"
        case "completed": "Completed"
        case "abandoned": "Abandoned"
        default: state
        }
    }
}
