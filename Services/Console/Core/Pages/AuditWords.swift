import StudyModels

/// The audit log as a coordinator reads it: each event's action in words, and its details with
/// their names and values said plainly. The action as recorded stays on the page for scripts
/// (the admin API's `GET /admin/v1/audit` has it too).
package enum AuditWords {
    /// What an action did. An action without words of its own (a new one) is said from its
    /// name: `study.file_uploaded` → "Study: file uploaded".
    package static func action(_ action: String) -> String {
        switch action {
        case "study.created": "Created the study"
        case "study.draft_saved": "Saved the draft"
        case "study.activity_saved": "Saved an activity (imported)"
        case "study.assessment_imported": "Imported a Sage assessment"
        case "study.schema_imported": "Imported a schema protocol"
        case "study.file_uploaded": "Uploaded an image or PDF"
        case "study.message_sent": "Sent a message to participants"
        case "study.moved_in": "Moved the study in from another deployment"
        case "study.role_granted": "Gave a role on the study"
        case "study.role_revoked": "Took a role on the study away"
        case "study.checklist_ticked": "Ticked an item of the manual check-list"
        case "study.checklist_unticked": "Unticked an item of the manual check-list"
        case "study.publish": "Published as upcoming"
        case "study.unpublish": "Took the upcoming study back to a draft"
        case "study.publish-for-testing": "Published for testing"
        case "study.end-testing": "Ended testing"
        case "study.launch": "Launched the study"
        case "study.publish-updates": "Published updates"
        case "study.pause": "Paused the study"
        case "study.resume": "Resumed the study"
        case "study.deactivate": "Closed the study"
        default: said(action)
        }
    }

    /// `study.file_uploaded` → "Study: file uploaded".
    static func said(_ action: String) -> String {
        let parts = action.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return spaced(action) }
        let subject = spaced(parts[0])
        return subject.prefix(1).uppercased() + subject.dropFirst() + ": " + spaced(parts[1])
    }

    /// A name said in words: `_` and `-` as spaces, camel case broken (`testDataRemoved` →
    /// "test data removed").
    static func spaced(_ name: String) -> String {
        var words = ""
        for scalar in name.unicodeScalars {
            if scalar == "_" || scalar == "-" {
                words.unicodeScalars.append(" ")
            } else if ("A"..."Z").contains(scalar), !words.isEmpty, words.unicodeScalars.last != " " {
                words.unicodeScalars.append(" ")
                words += String(scalar).lowercased()
            } else {
                words.unicodeScalars.append(scalar)
            }
        }
        return words
    }

    /// An event's details, names in words and values said plainly, in a stable order.
    package static func details(_ details: [String: String]) -> String {
        details.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }.map { name, value in
            "\(label(name)): \(Self.value(value, of: name))"
        }.joined(separator: "; ")
    }

    static func label(_ name: String) -> String {
        switch name {
        case "label": "version"
        case "reconsent": "everyone signs again"
        case "testDataRemoved": "testers' data removed"
        case "movedIn": "moved in"
        case "item": "item"
        case "notificationId": "message id"
        case "sha256": "SHA-256"
        default: spaced(name)
        }
    }

    static func value(_ value: String, of name: String) -> String {
        if name == "item", let item = LaunchChecklist.item(value) { return item.title }
        switch value {
        case "true": return "yes"
        case "false": return "no"
        default: return value
        }
    }
}
