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

    /// An invitation's state (`Invitation.states`).
    package static func invitation(_ state: String) -> String {
        switch state {
        case "invited": "Invited, not joined yet"
        case "enrolled": "Joined"
        case "withdrawn": "Joined, then withdrew"
        case "revoked": "Revoked"
        case "expired": "Expired"
        default: state
        }
    }

    /// A consent record's status.
    package static func consent(_ status: String) -> String {
        switch status {
        case "pending": "Not signed yet"
        case "completed": "Signed"
        default: status
        }
    }

    /// A stored response's processing status (also a Sage archive's response).
    package static func response(_ status: String) -> String {
        switch status {
        case "pending": "Waiting to be stored"
        case "processed": "Stored"
        case "error": "Could not be stored"
        case "forwarded": "Stored and forwarded"
        case "deleted": "Deleted"
        default: status
        }
    }
}

