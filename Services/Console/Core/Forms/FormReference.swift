import Foundation
import JSONText

/// What a field chooses from the study's own draft rather than from a fixed list: a branch's
/// target among its activity's steps, an anchor's activity, an anchor's date property. The
/// choices are read from the draft as saved (a step added on the page and not yet saved is not a
/// target yet).
package enum FormReference: Sendable, Equatable {
    /// The steps of the activity the field is in (`/activities/<n>/…`), but the field's own step.
    case stepKey
    /// The study's activities.
    case activityId
    /// The participant properties that may anchor a schedule: dates marked `useAsAnchor`.
    case anchorProperty
}

/// The draft a page's reference fields choose from.
package struct FormReferences: Sendable {
    package var draft: JSONValue

    package init(draft: JSONValue) {
        self.draft = draft
    }

    /// No draft: reference fields offer only the value they hold (the app's pages).
    package static let none = FormReferences(draft: .object([:]))

    /// The choices for `reference` in the field at `pointer` (absolute, in the document).
    package func options(_ reference: FormReference, at pointer: JSONPointer) -> [FormField.Option] {
        switch reference {
        case .stepKey:
            let tokens = pointer.tokens
            guard tokens.count >= 2, tokens[0] == "activities",
                case .array(let steps) = draft[pointer: JSONPointer(tokens: ["activities", tokens[1], "steps"])]
            else { return [] }
            // The field's own step (`/activities/<n>/steps/<m>/…`) is not a target of itself.
            let own = tokens.count >= 4 && tokens[2] == "steps" ? Int(tokens[3]) : nil
            return steps.enumerated().compactMap { index, step in
                guard index != own, let key = step["key"]?.string, !key.isEmpty else { return nil }
                return FormField.Option(key, Self.label(key, step["title"]))
            }
        case .activityId:
            guard case .array(let activities) = draft["activities"] else { return [] }
            return activities.compactMap { activity in
                guard let id = activity["activityId"]?.string, !id.isEmpty else { return nil }
                return FormField.Option(id, Self.label(id, activity["title"]))
            }
        case .anchorProperty:
            guard case .array(let properties) = draft["participantProperties"] else { return [] }
            return properties.compactMap { property in
                guard property["dataType"]?.string == "date", property["useAsAnchor"] == .bool(true),
                    let key = property["key"]?.string, !key.isEmpty
                else { return nil }
                return FormField.Option(key, Self.label(key, property["name"]))
            }
        }
    }

    /// `key: title` (the English title where there are translations), or the key alone.
    static func label(_ key: String, _ title: JSONValue?) -> String {
        let text: String? =
            switch title {
            case .string(let text): text
            case .object(let translations): translations["en"]?.string
            default: nil
            }
        guard let text, !text.isEmpty else { return key }
        return "\(key): \(text)"
    }
}
