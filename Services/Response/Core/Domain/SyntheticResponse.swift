import Foundation
import JSONText
import StudyModels

/// A response to an activity design that answers every step, shaped as the MyStudies apps shape
/// `processResponse`'s `data` (docs/response-api.md, Storage rehearsal): each result with its
/// `resultType`, `key`, times, `skipped` and `value`; an instruction step as the iOS app sends it
/// (`"resultType": "null"`); a form as a list of repetitions, each a list of results; a choice as
/// the list of chosen values, with the `{"other", "text"}` object where the design asks for free
/// text; an active task as its list of numeric and boolean results. Each value is the longest or
/// widest the design allows where that matters to storage (a text of the question's maximum
/// length), so a response the study's tables cannot hold is found before a participant sends it.
/// An activity imported from a Sage assessment is answered as Sage's archives answer it.
package enum SyntheticResponse {
    /// Answers the design's steps; nil when the design has no steps to answer (the design
    /// check refuses such a design before this is asked).
    package static func data(forDesign root: JSONValue) -> JSONValue? {
        guard case .array(let steps)? = root["activity"]?["steps"] else { return nil }
        return .object([
            "resultType": .string("questionnaire"), "startTime": .string(time), "endTime": .string(time),
            "results": .array(steps.map(result)),
        ])
    }

    /// Answers every question of a Sage assessment as its archives carry them to processing: each
    /// by its path (a section's name, `/`, the question's), in `sageAnswers` (`SageAnswers`), for
    /// an activity imported from one. Instructions, overviews and other steps without an answer
    /// have none here either.
    package static func data(forAssessment assessment: JSONValue) -> JSONValue {
        var answers: [JSONValue] = []
        func walk(_ nodes: [JSONValue], prefix: String) {
            for node in nodes {
                guard let identifier = node["identifier"]?.string else { continue }
                let path = prefix + identifier
                switch node["type"]?.string {
                case "section": walk(node["steps"]?.array ?? [], prefix: path + "/")
                case "simpleQuestion": answers.append(SageAnswers.stored((path, sageValue(node["inputItem"]), nil), start: time, end: time))
                case "choiceQuestion": answers.append(SageAnswers.stored((path, sageChoices(node), nil), start: time, end: time))
                default: continue
                }
            }
        }
        walk(assessment["steps"]?.array ?? [], prefix: "")
        return .object([SageAnswers.member: .array(answers), "startTime": .string(time), "endTime": .string(time)])
    }

    /// A simple question's answer as Sage's clients write it for its input item: a number within
    /// its bounds, a year, a duration in seconds, a text as long as the item allows.
    private static func sageValue(_ item: JSONValue?) -> JSONValue {
        let options = item?["formatOptions"]
        switch item?["type"]?.string {
        case "integer": return .number(number(options?["maximumValue"]) ?? 1)
        case "number": return .number(number(options?["maximumValue"]) ?? 0.5)
        case "year": return .number(number(options?["maximumYear"]) ?? 2000)
        case "duration": return .number(3600)
        case "string": return .string(text(ofLength: columnLength(item?["characterLimit"]) ?? 12))
        default: return .string("2026-01-05")  // Dates and times are kept as the text they came as.
        }
    }

    /// Every choice chosen (one for a single choice), and a free answer where the question takes
    /// "other".
    private static func sageChoices(_ node: JSONValue) -> JSONValue {
        let values = (node["choices"]?.array ?? []).compactMap { $0["value"] }
        var chosen = node["singleChoice"]?.bool == true ? Array(values.prefix(1)) : values
        if node["other"] != nil { chosen.append(.string(text(ofLength: 120))) }
        if chosen.isEmpty { chosen = [.string("1")] }
        return .array(Array(chosen.prefix(ResponseShredder.maxValuesPerResult)))
    }

    /// The time every result carries, as the apps write them (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`).
    static let time = "2026-01-05T09:30:00.000+0000"

    private static func result(_ step: JSONValue) -> JSONValue {
        let key = step["key"]?.text ?? ""
        let type = step["resultType"]?.text ?? ""
        guard step["type"]?.text?.lowercased() != "instruction", !type.isEmpty else {
            return answer("null", key, nil)
        }
        return answer(type, key, value(of: step, resultType: type.lowercased()))
    }

    private static func answer(_ type: String, _ key: String, _ value: JSONValue?) -> JSONValue {
        var result: JSONObject = [
            "resultType": .string(type), "key": .string(key), "startTime": .string(time), "endTime": .string(time),
            "skipped": .bool(false),
        ]
        if let value { result["value"] = value }
        return .object(result)
    }

    private static func value(of step: JSONValue, resultType: String) -> JSONValue {
        let format = step["format"]
        switch resultType {
        case "scale", "continuousscale":
            return .number(number(format?["maxValue"]) ?? 1)
        case "numeric":
            return .number(format?["style"]?.text == "Decimal" ? 1.5 : number(format?["maxValue"]) ?? 1)
        case "timeinterval": return .number(900)
        case "height": return .number(172)
        case "date": return .string(time)
        case "boolean": return .bool(true)
        case "text", "email":
            return .string(text(ofLength: maxLength(format) ?? 12))
        case "location": return .string("42.36,-71.06")
        case "timeofday": return .string("22:45:00")
        case "textscale", "valuepicker":
            return .string(choiceValues(format?["textChoices"]).first ?? "1")
        case "imagechoice":
            return .string(choiceValues(format?["imageChoices"]).first ?? "1")
        case "textchoice":
            return textChoice(format)
        case "grouped":
            guard case .array(let inner)? = step["steps"] else { return .array([]) }
            return .array([.array(inner.map(result))])
        case "fetalkickcounter":
            return .array([answer("numeric", "duration", .number(200)), answer("numeric", "count", .number(33))])
        case "spatialspanmemory":
            return .array([
                answer("numeric", "score", .number(50)), answer("numeric", "numberOfGames", .number(3)),
                answer("numeric", "numberOfFailures", .number(1)),
            ])
        case "towerofhanoi":
            return .array([answer("boolean", "puzzleWasSolved", .bool(true)), answer("numeric", "numberOfMoves", .number(7))])
        default:
            return .string("answer")
        }
    }

    /// Every option chosen once, the "other" options with their free text: as many selections as
    /// the question can have, each as long as the design lets it be.
    private static func textChoice(_ format: JSONValue?) -> JSONValue {
        guard case .array(let choices)? = format?["textChoices"], !choices.isEmpty else { return .array([.string("1")]) }
        // One option for a single choice: the one with free text where there is one.
        let chosen =
            format?["selectionStyle"]?.text == "Single" ? [choices.first { $0["other"] != nil } ?? choices[0]] : choices
        return .array(chosen.prefix(ResponseShredder.maxValuesPerResult).map { choice -> JSONValue in
            let value = JSONValue.string(choice["value"]?.text ?? "1")
            guard case .object? = choice["other"] else { return value }
            return .object(["other": value, "text": .string(text(ofLength: 120))])
        })
    }

    private static func choiceValues(_ choices: JSONValue?) -> [String] {
        guard case .array(let choices)? = choices else { return [] }
        return choices.compactMap { $0["value"]?.text }
    }

    /// The question's own maximum length, within what a column holds at most.
    private static func maxLength(_ format: JSONValue?) -> Int? {
        columnLength(format?["maxLength"])
    }

    /// A length the design gives, within what a column holds at most.
    private static func columnLength(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, number.double >= 1 else { return nil }
        return Int(min(number.double, Double(SurveySchema.maxVarchar)))
    }

    private static func number(_ value: JSONValue?) -> Double? {
        guard case .number(let number)? = value, number.double.isFinite else { return nil }
        return number.double
    }

    /// Letters beyond ASCII too: a column's length is counted in characters, not bytes.
    private static func text(ofLength length: Int) -> String {
        String(String(repeating: "Réponse ", count: length / 8 + 1).prefix(length))
    }
}
