import Foundation
import JSONText

/// Sections, questions and branching: what the schema app's survey page draws and how a question
/// shows or hides another.
extension SchemaProtocolCheck {
    /// Whether a `slider`'s `hide_value` is `>N` (shown from N up) or `<N` (up to N).
    static func isSliderRule(_ text: String) -> Bool {
        guard let first = text.first, first == ">" || first == "<" else { return false }
        var digits = text.dropFirst()
        if digits.first == "-" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    mutating func section(_ value: JSONValue, at pointer: String, ids: inout [String]) -> JSONValue {
        guard case .object(var section) = value else {
            error(pointer, "a section is an object with questions")
            return value
        }
        if let name = section["name"], name.string == nil { error("\(pointer)/name", "must be a string") }
        if let shuffle = section["shuffle"], !shuffle.isBool { error("\(pointer)/shuffle", "must be true or false") }
        guard case .array(var questions)? = section["questions"] else {
            error("\(pointer)/questions", "must be a list of questions")
            return value
        }
        for (index, question) in questions.enumerated() {
            questions[index] = self.question(question, at: "\(pointer)/questions/\(index)", ids: &ids)
        }
        section["questions"] = .array(questions)
        return .object(section)
    }

    mutating func question(_ value: JSONValue, at pointer: String, ids: inout [String]) -> JSONValue {
        guard case .object(var question) = value else {
            error(pointer, "a question is an object")
            return value
        }
        if let id = question["id"]?.nonEmptyString {
            if ids.contains(id) {
                warn("\(pointer)/id", "\"\(id)\" is already a question of this module: the app keeps only the later one's answer")
            }
            ids.append(id)
        } else {
            error("\(pointer)/id", "must be a non-empty string: it names the answer")
        }
        if let text = question["text"], text.string == nil { error("\(pointer)/text", "must be a string") }
        if let required = question["required"], !required.isBool { error("\(pointer)/required", "must be true or false") }
        guard var type = question["type"]?.string else {
            error("\(pointer)/type", "must be one of \(Self.questionTypes.sorted().joined(separator: ", "))")
            return .object(question)
        }
        if type == "video" || type == "audio" {
            // The README lists them as types; the app draws them only as media.
            question["type"] = .string("media")
            question["subtype"] = .string(type)
            warn("\(pointer)/type", "\(type) is drawn by the app only as media with subtype \(type); written that way")
            type = "media"
        }
        switch type {
        case "instruction":
            break
        case "text":
            subtype(question, at: pointer, allowed: ["short", "long", "numeric"])
        case "datetime":
            subtype(question, at: pointer, allowed: ["date", "time", "datetime"])
        case "yesno":
            for key in ["yes_text", "no_text"] where question[key]?.string == nil {
                warn("\(pointer)/\(key)", "is missing: the button has no label, and the answer is that label")
            }
        case "slider":
            if let min = question["min"]?.number, let max = question["max"]?.number {
                if min >= max { error("\(pointer)/max", "must be above min") }
            } else {
                error("\(pointer)/min", "a slider needs numbers min and max")
            }
        case "multi":
            if case .array(let options)? = question["options"], !options.isEmpty, options.allSatisfy({ $0.string != nil }) {
            } else {
                error("\(pointer)/options", "must be a non-empty list of options")
            }
            for key in ["radio", "modal"] {
                switch question[key] {
                case nil:
                    // The app compares with true and false: a missing key draws no options at all.
                    question[key] = .bool(false)
                    warn("\(pointer)/\(key)", "is missing: the current app would show no options; set to false")
                case .bool?: break
                default: error("\(pointer)/\(key)", "must be true or false")
                }
            }
            if let shuffle = question["shuffle"], !shuffle.isBool { error("\(pointer)/shuffle", "must be true or false") }
        case "media":
            let subtype = subtype(question, at: pointer, allowed: ["video", "audio", "image"])
            if question["src"]?.string.map(Self.isWebURL) != true { error("\(pointer)/src", "must be the media's http or https URL") }
            if subtype == "video", question["thumb"]?.string.map(Self.isWebURL) != true {
                error("\(pointer)/thumb", "a video needs a thumbnail URL")
            }
        case "external", "file":
            if question["src"]?.string.map(Self.isWebURL) != true { error("\(pointer)/src", "must be an http or https URL") }
            if type == "file", question["file_name"]?.string == nil { warn("\(pointer)/file_name", "is missing: the link has no label") }
        default:
            error("\(pointer)/type", "\"\(type)\" is not drawn by the app: one of \(Self.questionTypes.sorted().joined(separator: ", "))")
        }
        if let group = question["rand_group"], group.string == nil { error("\(pointer)/rand_group", "must be a string") }
        return .object(question)
    }

    @discardableResult
    mutating func subtype(_ question: JSONObject, at pointer: String, allowed: [String]) -> String? {
        guard let subtype = question["subtype"]?.string, allowed.contains(subtype) else {
            error("\(pointer)/subtype", "must be one of \(allowed.joined(separator: ", ")): the app draws no input otherwise")
            return nil
        }
        return subtype
    }

    /// `hide_id` names the question whose answer shows or hides this one.
    mutating func branching(_ sections: [JSONValue], at modulePointer: String) {
        let questions = Self.questions(of: .object(["sections": .array(sections)]))
        var byId: JSONObject = [:]
        for (_, question) in questions { if let id = question["id"]?.string { byId[id] = question } }
        for (pointer, question) in questions {
            let at = modulePointer + pointer
            guard let source = question["hide_id"]?.string, !source.isEmpty else { continue }
            guard let trigger = byId[source], let triggerType = trigger["type"]?.string else {
                warn("\(at)/hide_id", "\"\(source)\" is not a question of this module: the question always shows")
                continue
            }
            guard Self.branchingTriggers.contains(triggerType) else {
                warn("\(at)/hide_id", "\"\(source)\" is a \(triggerType) question: only multi, yesno, text and slider answers show or hide others")
                continue
            }
            if triggerType == "slider" {
                if !Self.isSliderRule(question["hide_value"]?.text ?? "") {
                    warn("\(at)/hide_value", "after a slider must be >N or <N (shown from N up, or up to N)")
                }
            } else if let hideIf = question["hide_if"], !hideIf.isBool {
                error("\(at)/hide_if", "must be true (hide when equal) or false (show only when equal)")
            }
        }
    }
}
