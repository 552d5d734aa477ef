import Foundation
import JSONText

/// An activity step by step, as the app presents it: each step a screen with its title, text
/// and answer control, in English or Spanish. Read from the draft, so a design can be checked
/// before it is published.
package enum ActivityPreview {
    static func screens(_ activity: JSONValue, language: String) -> [[String: Any]] {
        guard case .array(let steps) = activity["steps"] else { return [] }
        return steps.enumerated().map { index, step in screen(step, number: index + 1, language: language) }
    }

    static func screen(_ step: JSONValue, number: Int, language: String) -> [String: Any] {
        let kind = step["type"]?.text ?? ""
        let resultType = step["resultType"]?.text ?? ""
        // (An empty string opens a Mustache section: every optional text has a flag of its own.)
        let body = text(step["text"], language)
        let title = text(step["title"], language)
        var screen: [String: Any] = [
            "number": number, "key": step["key"]?.text ?? "", "title": title, "hasTitle": !title.isEmpty, "text": body,
            "hasText": !body.isEmpty, "skippable": step["skippable"] == .bool(true), "kind": kind, "resultType": resultType,
        ]
        switch kind {
        case "question":
            screen["answer"] = answer(step, language: language)
            screen["routes"] = routes(step)
            screen["hasRoutes"] = !routes(step).isEmpty
        case "form":
            if case .array(let questions) = step["steps"] {
                screen["questions"] = questions.enumerated().map { index, question in
                    ["title": text(question["title"], language), "answer": answer(question, language: language), "number": index + 1]
                }
            }
            if step["repeatable"] == .bool(true) {
                let label = text(step["repeatableText"], language)
                screen["repeatable"] = label.isEmpty ? "Add another" : label
                screen["isRepeatable"] = true
            }
        case "task":
            screen["task"] = taskName(resultType)
            screen["isTask"] = true
            if case .object(let format) = step["format"] {
                screen["parameters"] = format.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.text ?? "")" }.joined(separator: ", ")
            }
        default:
            break
        }
        return screen
    }

    /// What the participant answers with, described as a small set of facts for the template.
    package static func answer(_ step: JSONValue, language: String) -> [String: Any] {
        let type = step["resultType"]?.text ?? ""
        let format = step["format"] ?? .object([:])
        var answer: [String: Any] = ["type": type]
        switch type {
        case "scale", "continuousScale":
            answer["isScale"] = true
            answer["min"] = format["minValue"]?.text ?? ""
            answer["max"] = format["maxValue"]?.text ?? ""
            answer["step"] = format["step"]?.text ?? (type == "scale" ? "1" : "any")
            // Where the app puts the slider: at the default, or nowhere until the participant
            // moves it (a range input without a value would sit at the middle, rounded to a step).
            answer["value"] = format["default"]?.text ?? format["minValue"]?.text ?? ""
            answer["unset"] = format["default"] == nil
            answer["minDesc"] = text(format["minDesc"], language)
            answer["maxDesc"] = text(format["maxDesc"], language)
            answer["hasMinDesc"] = !text(format["minDesc"], language).isEmpty
            answer["hasMaxDesc"] = !text(format["maxDesc"], language).isEmpty
        case "textScale", "valuePicker", "textChoice":
            answer["isChoices"] = true
            answer["multiple"] = format["selectionStyle"]?.text == "Multiple"
            answer["choices"] = choices(format["textChoices"], language: language)
        case "imageChoice":
            answer["isChoices"] = true
            answer["choices"] = choices(format["imageChoices"], language: language).enumerated().map { index, choice in
                var choice = choice
                let image = imageSource(format["imageChoices"]?.array?[index]["image"])
                choice["image"] = image ?? ""
                choice["hasImage"] = image != nil
                return choice
            }
        case "boolean":
            answer["isBoolean"] = true
        default:
            answer["isInput"] = true
            answer["input"] = inputDescription(type, format: format, language: language)
        }
        return answer
    }

    static func choices(_ list: JSONValue?, language: String) -> [[String: Any]] {
        guard case .array(let items) = list else { return [] }
        return items.map { ["text": text($0["text"], language), "value": $0["value"]?.text ?? ""] }
    }

    /// An image of the study document as the page can show it: a base64 PNG, JPEG or GIF (as the
    /// apps take them) as a `data:` URL, an https URL as it is; nil for anything else.
    package static func imageSource(_ value: JSONValue?) -> String? {
        guard let text = value?.string?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        if text.hasPrefix("https://") { return text }
        let kinds = [("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif")]
        guard let kind = kinds.first(where: { text.hasPrefix($0.0) })?.1,
            text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+/=".unicodeScalars.contains($0)) })
        else { return nil }
        return "data:\(kind);base64,\(text)"
    }

    static func inputDescription(_ type: String, format: JSONValue, language: String) -> String {
        switch type {
        case "numeric":
            let unit = text(format["unit"], language)
            let range = [format["minValue"]?.text, format["maxValue"]?.text].compactMap { $0 }.joined(separator: " to ")
            return ["A \(format["style"]?.text == "Decimal" ? "decimal" : "whole") number", unit.isEmpty ? nil : "in \(unit)", range.isEmpty ? nil : "from \(range)"]
                .compactMap { $0 }.joined(separator: " ")
        case "date": return format["style"]?.text == "Date-Time" ? "A date and time" : "A date"
        case "timeOfDay": return "A time of day"
        case "text": return format["multipleLines"] == .bool(true) ? "Text, several lines" : "Text, one line"
        case "email": return "An e-mail address"
        case "timeInterval": return "A duration (hours and minutes)"
        case "height": return "A height (\(format["measurementSystem"]?.text ?? "Local") units)"
        case "location": return format["useCurrentLocation"] == .bool(true) ? "A place on a map, starting where the participant is" : "A place on a map"
        default: return type.isEmpty ? "No response type chosen yet" : type
        }
    }

    static func routes(_ step: JSONValue) -> String {
        guard case .array(let destinations) = step["destinations"], !destinations.isEmpty else { return "" }
        return destinations.map { destination in
            let condition = destination["condition"]?.text ?? ""
            let target = destination["destination"]?.text ?? ""
            let goal = target.isEmpty ? "the end" : target
            return condition.isEmpty ? "otherwise → \(goal)" : "\(destination["operator"]?.text ?? "=") \(condition) → \(goal)"
        }.joined(separator: "; ")
    }

    static func taskName(_ resultType: String) -> String {
        switch resultType {
        case "fetalKickCounter": "Fetal kick counter"
        case "towerOfHanoi": "Tower of Hanoi"
        case "spatialSpanMemory": "Spatial span memory"
        default: resultType
        }
    }

    /// A participant-facing text in `language`, or English.
    static func text(_ value: JSONValue?, _ language: String) -> String {
        switch value {
        case .string(let text): text
        case .object(let translations): translations[language]?.text ?? translations["en"]?.text ?? ""
        default: ""
        }
    }
}
