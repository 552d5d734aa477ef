import Foundation
import JSONText
import StudyModels

/// What a template needs to draw one field: its label, its current value (as the document holds
/// it, or as the admin typed it when a save failed), its problems, and whether it may change.
package struct FieldView: Sendable {
    package struct OptionView: Sendable {
        package var value: String
        package var label: String
        package var selected: Bool
    }

    package var id: String
    package var name: String
    package var label: String
    /// Empty when the field has none. (Never optional: a template that finds no value in the
    /// field looks in the page around it, and would show another field's help.)
    package var help: String
    package var hasHelp: Bool
    package var isText = false
    package var isLongText = false
    package var isLocalized = false
    /// A localized field of several lines.
    package var long = false
    package var isNumber = false
    package var isCheckbox = false
    package var isChoice = false
    package var isChoices = false
    package var isLines = false
    /// The `type` of a one-line input: `text`, or `date`, `time` and `datetime-local` for a value
    /// in the form those take (a value in any other form is shown as text, so it is never lost).
    package var inputType = "text"
    /// The `list` of a one-line input (each language's, when localized): the id of the page's
    /// suggestions, empty for none.
    package var suggestions = ""
    /// What a select's empty choice says.
    package var emptyLabel = "Choose…"
    /// An instant the apps read with its offset (`FormField.Kind.appDateTime`): `value` is as
    /// the document holds it until `onStudyClock` puts it on the study's clock.
    package var isAppDate = false
    /// Times of day, each in a time input (`times`: what the field holds, in order).
    package var isTimes = false
    package var times: [String] = []
    /// Nothing to type or show: the value is always the same.
    package var isFixed = false
    package var value = ""
    /// Localized fields: the Spanish input is shown when the study offers Spanish.
    package var spanish = false
    package var valueEs = ""
    package var checked = false
    package var options: [OptionView] = []
    package var problems: [String] = []
    /// Stored, not computed: templates read values by reflection, which sees stored properties only.
    package var invalid = false
    /// A viewer sees the value as text, without a control.
    package var readOnly: Bool
    /// The value as a viewer reads it (a choice's label, the chosen options).
    package var shown: String = ""
    /// Whose clock the time is read on; the page says so beside it.
    package var zone: FormField.Zone?

    /// - Parameter prefix: the pointer of the item the field belongs to (the document, or a row).
    package init(
        field: FormField, at prefix: JSONPointer = JSONPointer(tokens: []), values: FormFields, problems: [ValidationProblem],
        spanish: Bool, readOnly: Bool, references: FormReferences = .none
    ) {
        let absolute = JSONPointer(tokens: prefix.tokens + field.pointer.tokens)
        id = Self.elementID(absolute)
        let name = field.name(at: prefix)
        self.name = name
        label = field.label
        help = field.help ?? ""
        hasHelp = field.help != nil
        zone = field.zone
        self.readOnly = readOnly
        self.problems = problems.filter { JSONPointer($0.pointer)?.isWithin(absolute) ?? false }.map(\.message)
        invalid = !self.problems.isEmpty
        switch field.kind {
        case .text:
            isText = true
            suggestions = field.suggests?.rawValue ?? ""
            value = values[name] ?? ""
            shown = value
        case .longText:
            isLongText = true
            value = values[name] ?? ""
            shown = value
        case .number:
            isNumber = true
            value = values[name] ?? ""
            shown = value
        case .localized(let long):
            isLocalized = true
            self.long = long
            // A text area takes no suggestions.
            suggestions = long ? "" : field.suggests?.rawValue ?? ""
            value = values[name + "/en"] ?? ""
            valueEs = values[name + "/es"] ?? ""
            self.spanish = spanish || !valueEs.isEmpty
            shown = value
        case .checkbox:
            isCheckbox = true
            checked = values[name] == "true"
            shown = checked ? "yes" : "no"
        case .yesNo(let yes, let no):
            isChoice = true
            value = values[name] ?? ""
            options = [OptionView(value: "true", label: yes, selected: value == "true"), OptionView(value: "false", label: no, selected: value == "false")]
            shown = value == "true" ? yes : value == "false" ? no : ""
        case .choice(let options), .numberChoice(let options):
            choose(from: options, value: values[name] ?? "")
        case .reference(let reference, let none):
            choose(from: references.options(reference, at: absolute), value: values[name] ?? "")
            emptyLabel = none
        case .date, .time, .dateTime:
            isText = true
            value = values[name] ?? ""
            shown = value
            inputType = Self.browserInputType(field.kind, for: value)
        case .appDateTime:
            isText = true
            isAppDate = true
            value = values[name] ?? ""
            shown = value
            inputType = Self.browserInputType(.dateTime, for: value)
        case .times:
            isTimes = true
            times = values.all(name)
            shown = times.joined(separator: ", ")
        case .choices(let options):
            isChoices = true
            let chosen = Set(values.all(name))
            self.options = options.map { OptionView(value: $0.value, label: $0.label, selected: chosen.contains($0.value)) }
            shown = options.filter { chosen.contains($0.value) }.map(\.label).joined(separator: ", ")
        case .lines:
            isLines = true
            value = values[name] ?? ""
            shown = value
        case .fixed(let value):
            isFixed = true
            shown = value.text ?? ""
        case .cleared:
            isFixed = true
        }
    }

    /// The field as the page shows it in the study's time zone: a date the apps read with an
    /// offset becomes its wall clock there, in a date-and-time input. A value that has none (not
    /// such a date, seconds the input would drop, no zone) stays as it is, in a text input, so
    /// it is never lost; one already a wall clock (a page drawn again as it was typed) stays too.
    package func onStudyClock(_ zone: TimeZone?) -> FieldView {
        guard isAppDate, let zone, let local = AppDates.wallClock(of: value, in: zone) else { return self }
        var field = self
        field.value = local
        field.shown = local.replacingOccurrences(of: "T", with: " ")
        field.inputType = "datetime-local"
        return field
    }

    /// A select of `options` with `value` chosen. A value the list does not offer (an app since
    /// removed, a step renamed) stays visible and selected.
    private mutating func choose(from options: [FormField.Option], value: String) {
        isChoice = true
        self.value = value
        var listed = options
        if !value.isEmpty, !options.contains(where: { $0.value == value }) { listed.insert(.init(value, value), at: 0) }
        self.options = listed.map { OptionView(value: $0.value, label: $0.label, selected: $0.value == value) }
        shown = listed.first { $0.value == value }?.label ?? ""
    }

    /// The browser's own input for a date or time field, when `value` is empty or in the exact
    /// form that input takes; otherwise a text input, which shows the value as it is (a date input
    /// given `2026-02-30` would show nothing, and send nothing back).
    package static func browserInputType(_ kind: FormField.Kind, for value: String) -> String {
        let (type, length, valid): (String, Int, (String) -> Bool) =
            switch kind {
            case .date: ("date", 10, { LocalTimes.date($0) != nil })
            case .time: ("time", 5, { LocalTimes.time($0) != nil })
            case .dateTime: ("datetime-local", 16, { LocalTimes.dateTime($0) != nil })
            default: ("text", 0, { _ in true })
            }
        if value.isEmpty { return type }
        return value.unicodeScalars.count == length && valid(value) ? type : "text"
    }

    /// `/overview/0/title` → `f-overview-0-title`: an id that needs no escaping in a URL fragment.
    package static func elementID(_ pointer: JSONPointer) -> String {
        var id = "f"
        for token in pointer.tokens {
            id += "-"
            for scalar in token.unicodeScalars {
                // ASCII letters and digits at once (nearly every name), Unicode's properties beyond.
                let kept = scalar.isASCII
                    ? ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    : scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                id.unicodeScalars.append(kept ? scalar : "_")
            }
        }
        return id
    }
}
