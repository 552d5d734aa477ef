import ConsoleCore
import Mustache

// A template reads a model by name. Without this, swift-mustache finds each value by reflection (a
// Mirror of the whole model for every tag); a switch costs next to nothing. A name the model does
// not have answers nil, and the template looks in the context around it, as with reflection.
// (The form elements, the bulk of a page, are not drawn by templates: see FormHTML.)

extension ActionChoice: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "action": action
        case "label": label
        case "explanation": explanation
        case "irreversible": irreversible
        case "notifies": notifies
        default: nil
        }
    }
}

extension StudyChecklist.Item: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "slug": slug
        case "title": title
        case "state": state.rawValue
        case "stateLabel": state.label
        case "reason": reason
        case "more": count > 1 ? "and \(count - 1) more" : nil
        default: nil
        }
    }
}
