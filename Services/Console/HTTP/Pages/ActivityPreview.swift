import Foundation
import JSONText
import StudyModels

/// An activity step by step, as the app presents it: each step a screen with its title, text
/// and answer control, in English or Spanish. Read from the draft, so a design can be checked
/// before it is published.
package enum ActivityPreview {
    /// A step as the app shows it.
    struct Screen {
        struct Question {
            var title: String
            var answer: Answer
            var number: Int
        }

        struct Task {
            var name: String
            var parameters: String
        }

        var number: Int
        var key: String
        var title: String?
        var text: String?
        var skippable: Bool
        /// A question's answer control.
        var answer: Answer?
        /// A form's questions.
        var questions: [Question] = []
        /// A repeatable form's button.
        var repeatable: String?
        var task: Task?
        /// Where branching goes from a question, in words.
        var routes: String?
    }

    /// What the participant answers with: one of a scale, a list of choices, yes or no, or an
    /// input described in words.
    package struct Answer {
        package struct Scale {
            package var min: String
            package var max: String
            package var step: String
            /// Where the slider is drawn.
            package var value: String
            /// No default: the app shows no answer until the participant moves the slider.
            package var unset: Bool
            package var minDesc: String?
            package var maxDesc: String?
        }

        package struct Choice {
            package var text: String
            package var value: String
            /// An image choice's image, as the page can show it.
            package var image: String?
        }

        package struct ChoiceList {
            package var multiple: Bool
            package var choices: [Choice]
        }

        package var scale: Scale?
        package var choiceList: ChoiceList?
        package var isBoolean = false
        package var input: String?
    }

    static func screens(_ activity: JSONValue, language: String) -> [Screen] {
        guard case .array(let steps) = activity["steps"] else { return [] }
        return steps.enumerated().map { index, step in screen(step, number: index + 1, language: language) }
    }

    static func screen(_ step: JSONValue, number: Int, language: String) -> Screen {
        let kind = step["type"]?.text ?? ""
        let resultType = step["resultType"]?.text ?? ""
        var screen = Screen(
            number: number, key: step["key"]?.text ?? "", title: nonEmpty(text(step["title"], language)), text: nonEmpty(text(step["text"], language)),
            skippable: step["skippable"] == .bool(true))
        switch kind {
        case "question":
            screen.answer = answer(step, language: language)
            screen.routes = nonEmpty(routes(step))
        case "form":
            if case .array(let questions) = step["steps"] {
                screen.questions = questions.enumerated().map { index, question in
                    .init(title: text(question["title"], language), answer: answer(question, language: language), number: index + 1)
                }
            }
            if step["repeatable"] == .bool(true) {
                screen.repeatable = nonEmpty(text(step["repeatableText"], language)) ?? "Add another"
            }
        case "task":
            var parameters = ""
            if case .object(let format) = step["format"] {
                parameters = format.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.text ?? "")" }.joined(separator: ", ")
            }
            screen.task = .init(name: taskName(resultType), parameters: parameters)
        default:
            break
        }
        return screen
    }

    static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    /// What the participant answers with.
    package static func answer(_ step: JSONValue, language: String) -> Answer {
        let type = step["resultType"]?.text ?? ""
        let format = step["format"] ?? .object([:])
        var answer = Answer()
        switch type {
        case "scale", "continuousScale":
            answer.scale = .init(
                min: format["minValue"]?.text ?? "", max: format["maxValue"]?.text ?? "",
                step: format["step"]?.text ?? (type == "scale" ? "1" : "any"),
                // Where the app puts the slider: at the default, or nowhere until the participant
                // moves it (a range input without a value would sit at the middle, rounded to a step).
                value: format["default"]?.text ?? format["minValue"]?.text ?? "", unset: format["default"] == nil,
                minDesc: nonEmpty(text(format["minDesc"], language)), maxDesc: nonEmpty(text(format["maxDesc"], language)))
        case "textScale", "valuePicker", "textChoice":
            answer.choiceList = .init(
                multiple: format["selectionStyle"]?.text == "Multiple", choices: choices(format["textChoices"], language: language))
        case "imageChoice":
            let images = format["imageChoices"]?.array ?? []
            answer.choiceList = .init(
                multiple: false,
                choices: choices(format["imageChoices"], language: language).enumerated().map { index, choice in
                    var choice = choice
                    choice.image = images.indices.contains(index) ? imageSource(images[index]["image"]) : nil
                    return choice
                })
        case "boolean":
            answer.isBoolean = true
        default:
            answer.input = inputDescription(type, format: format, language: language)
        }
        return answer
    }

    static func choices(_ list: JSONValue?, language: String) -> [Answer.Choice] {
        guard case .array(let items) = list else { return [] }
        return items.map { .init(text: text($0["text"], language), value: $0["value"]?.text ?? "") }
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
            return condition.isEmpty ? "otherwise → \(goal)" : "\(destination["operator"]?.text.map { Destination.Operator(named: $0)?.symbol ?? $0 } ?? "=") \(condition) → \(goal)"
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
