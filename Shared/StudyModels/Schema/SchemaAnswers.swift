import JSONText

/// A schema app survey response as the study's tables take responses: the answers, by question
/// id, become results of the steps the import made of the module's questions
/// (docs/schema-protocols.md, Receiving data), valued as those steps' answers are.
///
/// The app's answers are loosely typed (a numeric text input may give a number or a string, a
/// checkbox list a `"a;b;"` string or an array), so each is read the ways the app writes it. What
/// none of them fits is left unanswered in the tables, with a note; the POST's fields are kept
/// verbatim beside the response, so nothing is lost.
public enum SchemaAnswers {
    public struct Converted: Sendable, Equatable {
        /// The response's `results`, one per answerable question of the module.
        public var results: [JSONValue]
        /// What could not be read, for the researchers.
        public var notes: [String]
    }

    public static func convert(module: JSONValue, answers: JSONObject) -> Converted {
        var converted = Converted(results: [], notes: [])
        // By scalars, as `answers` is keyed: an answer under a canonically equivalent spelling of
        // a question's id is no answer to it, and is named in the notes.
        var known: Set<ScalarKey> = []
        var questions: JSONObject = [:]
        var order: [String] = []
        for section in module["sections"]?.array ?? [] {
            for question in section["questions"]?.array ?? [] {
                guard let id = question["id"]?.string else { continue }
                // A repeated id: the later question is the one the import kept.
                if questions[id] == nil { order.append(id) }
                questions[id] = question
                known.insert(ScalarKey(id))
            }
        }
        for id in order {
            guard let question = questions[id], let type = question["type"]?.string else { continue }
            guard let (resultType, value) = result(question, type: type, answer: answers[id] ?? .string(""), notes: &converted.notes)
            else { continue }
            converted.results.append(.object([
                "key": .string(id), "resultType": .string(resultType), "value": value ?? .null, "skipped": .bool(value == nil),
            ]))
        }
        for id in answers.keys.sorted() where !known.contains(ScalarKey(id)) {
            converted.notes.append("\"\(id)\" is not a question of the module; its answer is kept with the submission only")
        }
        return converted
    }

    /// The result type and value of one answer; nil for a question that has no answer column,
    /// and a nil value for an unanswered one.
    private static func result(
        _ question: JSONValue, type: String, answer: JSONValue, notes: inout [String]
    ) -> (String, JSONValue?)? {
        let id = question["id"]?.string ?? ""
        let subtype = question["subtype"]?.string
        func unreadable(_ what: String) -> JSONValue? {
            notes.append("the answer to \"\(id)\" is not \(what): \(answer.serialized(sortedKeys: true))")
            return nil
        }
        if answer == .string("") || answer == .null { return isAnswerable(type) ? (resultType(type, subtype), nil) : nil }
        switch type {
        case "text" where subtype == "numeric", "slider":
            let number: Double? =
                switch answer {
                case .number(let value): value.double
                case .string(let text): Double(text.trimmingCharacters(in: .whitespaces))
                default: nil
                }
            // Integers beyond 32 bits would be refused by the tables' number check as Java longs.
            guard let number, number.isFinite, number.rounded() != number || abs(number) <= Double(Int32.max) else {
                return (resultType(type, subtype), unreadable("a number"))
            }
            return (resultType(type, subtype), .number(number))
        case "text":
            return ("text", .string(answer.string ?? answer.serialized(sortedKeys: true)))
        case "datetime":
            guard let text = answer.string, let moment = SchemaMoment(text) else {
                return (resultType(type, subtype), unreadable("a date and time"))
            }
            switch subtype {
            case "date": return ("date", .string(moment.day))
            case "time": return ("timeOfDay", .string(moment.timeOfDay))
            default: return ("date", .string(moment.answerDate))
            }
        case "yesno":
            if answer == question["yes_text"] { return ("boolean", .bool(true)) }
            if answer == question["no_text"] { return ("boolean", .bool(false)) }
            return ("boolean", unreadable("the question's yes or no label"))
        case "multi":
            let choices: [String]
            switch answer {
            case .string(let text) where question["radio"]?.bool == true: choices = [text]
            // A checkbox list outside a modal: each choice followed by ";", in click order.
            case .string(let text): choices = text.split(separator: ";", omittingEmptySubsequences: true).map(String.init)
            case .array(let items) where items.allSatisfy({ $0.string != nil }): choices = items.compactMap(\.string)
            default: return ("textChoice", unreadable("a choice or list of choices"))
            }
            return ("textChoice", .array(choices.map(JSONValue.string)))
        default:
            return nil  // Instructions and media: `1` marks a random group's winner, which has no column.
        }
    }

    /// A moment the app wrote (`moment().format()`, an ion-datetime value) in the tables' date
    /// answer form, `yyyy-MM-dd'T'HH:mm:ss.SSS±HHmm`; nil when it is not one.
    public static func answerDate(_ text: String) -> String? {
        SchemaMoment(text)?.answerDate
    }

    private static func isAnswerable(_ type: String) -> Bool {
        ["text", "datetime", "yesno", "slider", "multi"].contains(type)
    }

    private static func resultType(_ type: String, _ subtype: String?) -> String {
        switch (type, subtype) {
        case ("text", "numeric"): "numeric"
        case ("text", _): "text"
        case ("datetime", "time"): "timeOfDay"
        case ("datetime", _): "date"
        case ("yesno", _): "boolean"
        case ("slider", _): "continuousScale"
        default: "textChoice"
        }
    }
}

/// A moment as the app's date pickers write it (ISO 8601: `2019-05-08T23:16:21.123+10:00`, or
/// without seconds, fraction or offset), read into its wall clock and offset.
struct SchemaMoment: Equatable {
    var year, month, dayOfMonth, hour, minute, second, millisecond: Int
    /// Minutes east of UTC; nil when the text gave none.
    var offsetMinutes: Int?

    init?(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var position = 0
        func number(_ count: Int) -> Int? {
            guard position + count <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[position..<position + count] {
                guard scalar.isASCII, let digit = Int(String(scalar)) else { return nil }
                value = value * 10 + digit
            }
            position += count
            return value
        }
        func skip(_ expected: Character) -> Bool {
            guard position < scalars.count, Character(scalars[position]) == expected else { return false }
            position += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        (self.year, self.month, dayOfMonth) = (year, month, day)
        (hour, minute, second, millisecond) = (0, 0, 0, 0)
        if position == scalars.count { return }
        guard skip("T"), let hour = number(2), skip(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
        (self.hour, self.minute) = (hour, minute)
        if skip(":") {
            guard let second = number(2), second < 60 else { return nil }
            self.second = second
            if skip(".") {
                var digits = 0
                var fraction = 0
                while position < scalars.count, scalars[position].isASCII, let digit = Int(String(scalars[position])) {
                    if digits < 3 { fraction = fraction * 10 + digit }
                    digits += 1
                    position += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { fraction *= 10 }
                millisecond = fraction
            }
        }
        if position == scalars.count { return }
        if skip("Z") {
            offsetMinutes = 0
        } else {
            let sign = skip("+") ? 1 : (skip("-") ? -1 : 0)
            guard sign != 0, let hours = number(2) else { return nil }
            _ = skip(":")
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        }
        guard position == scalars.count else { return nil }
    }

    /// `yyyy-MM-dd`, the day on the participant's calendar.
    var day: String { pad(year, 4) + "-" + pad(month, 2) + "-" + pad(dayOfMonth, 2) }
    /// `HH:mm:ss` on the participant's clock.
    var timeOfDay: String { pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) }
    /// The tables' date answer form, `yyyy-MM-dd'T'HH:mm:ss.SSS±HHmm` (UTC when no offset was given).
    var answerDate: String {
        let offset = offsetMinutes ?? 0
        return day + "T" + timeOfDay + "." + pad(millisecond, 3) + (offset < 0 ? "-" : "+") + pad(abs(offset) / 60, 2)
            + pad(abs(offset) % 60, 2)
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
