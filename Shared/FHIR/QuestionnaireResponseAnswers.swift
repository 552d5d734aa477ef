import JSONText
import StudyModels

/// Compact JSON text written piece by piece: the fixed parts as they are, names and values
/// escaped as `JSONValue` writes them.
public struct FHIRText: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Text that needs no escaping: member names, punctuation, fixed values.
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Text written and escaped before (a prepared step's).
    mutating func append(_ prepared: [UInt8]) {
        bytes.append(contentsOf: prepared)
    }

    mutating func string(_ text: String) {
        JSONValue.writeString(text, to: &bytes)
    }

    mutating func value(_ value: JSONValue) {
        value.write(to: &bytes, sortedKeys: false)
    }

    /// A string, number or boolean as it lies in a read text, written as `value` writes it.
    mutating func scalar(_ value: JSONTape.Value) {
        value.writeScalar(to: &bytes)
    }

    /// Takes back what was written after `count` bytes: a member begun and then found empty
    /// (FHIR has no empty arrays or objects).
    mutating func truncate(to count: Int) {
        bytes.removeSubrange(count...)
    }

    /// Ends an NDJSON line: the next resource written starts the next.
    public mutating func endLine() {
        bytes.append(UInt8(ascii: "\n"))
    }
}

/// A design's steps by key (their Unicode scalars: two keys that differ only in normalisation
/// stay two; the first step of a key is the one answered), each with what its answers share,
/// the fixed text already escaped.
struct PreparedSteps: Sendable {
    /// A class: an export reads a step for every answer, and a reference is one retain where
    /// a struct of arrays and dictionaries is several.
    final class Step: Sendable {
        let resultType: String
        /// `,"text":"…"`, or nothing when the step has no title.
        let textMember: [UInt8]
        /// The FHIR item type of the step's answers; nil when the design does not say.
        let itemType: String?
        /// `"system":"…"` of its choices' codings, or nothing (a task's results have none).
        let systemMember: [UInt8]
        /// Each choice value's `"display":"…"`, when its text is not empty.
        let displays: [ScalarKey: [UInt8]]
        let children: PreparedSteps

        init(
            resultType: String, textMember: [UInt8], itemType: String?, systemMember: [UInt8], displays: [ScalarKey: [UInt8]],
            children: PreparedSteps
        ) {
            self.resultType = resultType
            self.textMember = textMember
            self.itemType = itemType
            self.systemMember = systemMember
            self.displays = displays
            self.children = children
        }
    }

    private(set) var byKey: [ScalarKey: Step] = [:]

    static let none = PreparedSteps()

    private init() {}

    /// `choiceSystem` names the code system of a question's choices by its key: the key of the
    /// question itself, also within a form.
    init(_ steps: [ActivityStep], language: String?, choiceSystem: (String) -> String, depth: Int = 0) {
        guard depth < AnswerWriter.maxDepth else { return }
        for step in steps where byKey[ScalarKey(step.key)] == nil {
            // The first choice of a value is the one shown, as the first step of a key is.
            var displays: [ScalarKey: [UInt8]] = [:]
            var seen = Set<ScalarKey>()
            for choice in QuestionnaireMapping.choices(step, language: language) where seen.insert(ScalarKey(choice.value)).inserted {
                if let shown = choice.text, !shown.isEmpty { displays[ScalarKey(choice.value)] = Self.member("display", shown) }
            }
            let title = step.title?.text(for: language) ?? ""
            byKey[ScalarKey(step.key)] = Step(
                resultType: step.resultType, textMember: title.isEmpty ? [] : [UInt8(ascii: ",")] + Self.member("text", title),
                itemType: QuestionnaireMapping.itemType(step), systemMember: Self.member("system", choiceSystem(step.key)),
                displays: displays,
                children: PreparedSteps(step.steps ?? [], language: language, choiceSystem: choiceSystem, depth: depth + 1))
        }
    }

    /// A task's results, typed by key (a task has no steps for them).
    init(task: TaskType) {
        for (key, type) in ItemBuilder.taskResults(task) {
            byKey[ScalarKey(key)] = Step(resultType: "", textMember: [], itemType: type, systemMember: [], displays: [:], children: .none)
        }
    }

    subscript(key: String) -> Step? { byKey[ScalarKey(key)] }

    /// `"name":"text"`, escaped.
    private static func member(_ name: StaticString, _ value: String) -> [UInt8] {
        var text = FHIRText()
        text.raw("\"")
        text.raw(name)
        text.raw("\":")
        text.string(value)
        return text.bytes
    }
}

/// Writes the answered items of a response from the app's results, read where they lie in the
/// stored text (`JSONTape`): an export writes hundreds of thousands of responses, and building
/// each one's values to read a few members of each result cost more than the writing.
struct AnswerWriter {
    private(set) var notMapped: [NotMapped] = []

    /// Repeated groups and lists are bounded where the response was received (its node budget);
    /// this bounds the depth of groups within groups, which a design never nests past two.
    static let maxDepth = 4

    /// Writes the items of `results` (a list of the app's results), comma-separated, and says
    /// whether it wrote any.
    mutating func items(
        _ results: some Sequence<JSONTape.Value>, steps: PreparedSteps, prefix: String?, depth: Int = 0, into text: inout FHIRText
    ) -> Bool {
        guard depth < Self.maxDepth else { return false }
        var wrote = false
        for result in results {
            guard let read = ReadResult(result), let key = read.key?.text, !key.isEmpty else { continue }
            let linkId = prefix.map { "\($0).\(key)" } ?? key
            guard read.skipped?.isTrue != true, let value = read.value, value.kind != .null else { continue }
            let step = steps[key]
            let resultType = read.resultType?.text ?? step?.resultType ?? ""
            let start = text.bytes.count
            if wrote { text.raw(",") }
            text.raw(#"{"linkId":"#)
            text.string(linkId)
            if let step { text.append(step.textMember) }
            switch resultType {
            case "grouped":
                // One list of results per repetition of the form; each repetition is an item.
                let repetitions: [JSONTape.Value] =
                    if value.kind == .array {
                        value.items.allSatisfy({ $0.kind == .object }) ? [value] : value.items.filter { $0.kind == .array }
                    } else { [] }
                let head = Array(text.bytes[(wrote ? start + 1 : start)...])
                text.truncate(to: start)
                for repetition in repetitions {
                    let before = text.bytes.count
                    if wrote { text.raw(",") }
                    text.append(head)
                    text.raw(#","item":["#)
                    if items(repetition.items, steps: step?.children ?? .none, prefix: linkId, depth: depth + 1, into: &text) {
                        text.raw("]}")
                        wrote = true
                    } else {
                        text.truncate(to: before)
                    }
                }
                continue
            case "fetalKickCounter", "towerOfHanoi", "spatialSpanMemory":
                guard value.kind == .array else {
                    text.truncate(to: start)
                    notMapped.append(NotMapped(linkId: linkId, reason: "a task result that is not a list of results"))
                    continue
                }
                let results = TaskType(rawValue: resultType).map { PreparedSteps(task: $0) } ?? .none
                text.raw(#","item":["#)
                guard items(value.items, steps: results, prefix: linkId, depth: depth + 1, into: &text) else {
                    text.truncate(to: start)
                    continue
                }
            default:
                text.raw(#","answer":["#)
                guard Self.answers(value, resultType: resultType, step: step, into: &text) else {
                    text.truncate(to: start)
                    notMapped.append(NotMapped(linkId: linkId, reason: "a \(resultType) answer of an unexpected shape"))
                    continue
                }
            }
            text.raw("]}")
            wrote = true
        }
        return wrote
    }

    /// The members of an app's result that its answer is written from, read in one pass over
    /// the result (names compared by their bytes; of a name written twice, the later).
    private struct ReadResult {
        var key: JSONTape.Value?
        var resultType: JSONTape.Value?
        var skipped: JSONTape.Value?
        var value: JSONTape.Value?

        init?(_ result: JSONTape.Value) {
            guard result.kind == .object else { return nil }
            for (name, member) in result.members {
                if name.isString("key") {
                    key = member
                } else if name.isString("value") {
                    value = member
                } else if name.isString("skipped") {
                    skipped = member
                } else if name.isString("resultType") {
                    resultType = member
                }
            }
        }
    }

    /// Writes the answers `value` holds, comma-separated, and says whether it wrote any.
    private static func answers(_ value: JSONTape.Value, resultType: String, step: PreparedSteps.Step?, into text: inout FHIRText) -> Bool {
        let itemType = step?.itemType
        switch resultType {
        case "scale", "continuousScale", "numeric":
            guard let number = value.number else { return false }
            let whole = number.isWhole && abs(number.double) < 1e15
            let integer = whole && (itemType == "integer" || (itemType == nil && resultType == "scale"))
            text.raw(integer ? #"{"valueInteger":"# : #"{"valueDecimal":"#)
            text.scalar(value)
            text.raw("}")
        case "timeInterval", "height":
            guard value.kind == .number else { return false }
            text.raw(#"{"valueQuantity":{"value":"#)
            text.scalar(value)
            text.raw(
                resultType == "height"
                    ? #","unit":"cm","system":"http://unitsofmeasure.org","code":"cm"}}"#
                    : #","unit":"s","system":"http://unitsofmeasure.org","code":"s"}}"#)
        case "boolean":
            guard value.kind == .bool else { return false }
            text.raw(#"{"valueBoolean":"#)
            text.scalar(value)
            text.raw("}")
        case "timeOfDay":
            guard let time = value.text.flatMap(FHIRDates.time), !time.isEmpty else { return false }
            text.raw(#"{"valueTime":"#)
            text.string(time)
            text.raw("}")
        case "date":
            guard let given = value.text else { return false }
            let day = itemType == "date"
            guard let date = day ? FHIRDates.day(given) : FHIRDates.dateTime(given), !date.isEmpty else { return false }
            text.raw(day ? #"{"valueDate":"# : #"{"valueDateTime":"#)
            text.string(date)
            text.raw("}")
        case "textScale", "valuePicker", "imageChoice", "textChoice":
            var wrote = false
            func write(_ selection: JSONTape.Value) {
                if selection.kind == .object {
                    // An "other" choice: its value, and the text the participant typed.
                    if let other = selection.member("other")?.text { wrote = coding(other, step: step, comma: wrote, into: &text) || wrote }
                    if let typed = selection.member("text")?.text, !typed.isEmpty {
                        if wrote { text.raw(",") }
                        text.raw(#"{"valueString":"#)
                        text.string(typed)
                        text.raw("}")
                        wrote = true
                    }
                } else if let code = selection.text {
                    wrote = coding(code, step: step, comma: wrote, into: &text) || wrote
                }
            }
            if value.kind == .array {
                for selection in value.items { write(selection) }
            } else {
                write(value)
            }
            return wrote
        default:
            guard value.isNonEmptyString else { return false }
            text.raw(#"{"valueString":"#)
            text.scalar(value)
            text.raw("}")
        }
        return true
    }

    /// A `valueCoding` answer: the question's code system, the code, and the choice's display. A
    /// question the design does not know has no code system: the code is the app's value alone.
    /// Writes nothing, and says so, when the coding would be empty.
    private static func coding(_ code: String, step: PreparedSteps.Step?, comma: Bool, into text: inout FHIRText) -> Bool {
        let system = step?.systemMember ?? []
        let display = step?.displays[ScalarKey(code)] ?? []
        guard !system.isEmpty || !code.isEmpty || !display.isEmpty else { return false }
        if comma { text.raw(",") }
        text.raw(#"{"valueCoding":{"#)
        var first = true
        if !system.isEmpty {
            text.append(system)
            first = false
        }
        if !code.isEmpty {
            text.raw(first ? #""code":"# : #","code":"#)
            text.string(code)
            first = false
        }
        if !display.isEmpty {
            if !first { text.raw(",") }
            text.append(display)
        }
        text.raw("}}")
        return true
    }
}
