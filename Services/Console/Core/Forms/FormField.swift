import Foundation
import JSONText
import StudyModels

/// One input of a console page, bound to a member of the study document by its JSON Pointer. The
/// pointer (after the pointer of the list row it is in, if any) is also the input's name, so a
/// problem the admin API locates finds its field.
package struct FormField: Sendable {
    package struct Option: Sendable, Equatable {
        package var value: String
        package var label: String

        package init(_ value: String, _ label: String) {
            self.value = value
            self.label = label
        }
    }

    package enum Kind: Sendable {
        /// One line of text; empty removes the member.
        case text
        /// Several lines of text (HTML where the apps show HTML).
        case longText
        /// A participant-facing text: English, and Spanish beside it when the study has Spanish.
        case localized(long: Bool)
        /// A number; text that is not one is sent as it was typed, so the admin API names it.
        case number
        /// true or false, as a checkbox.
        case checkbox
        /// true or false, as a choice of two labels (`yes` for true).
        case yesNo(yes: String, no: String)
        /// One of `options`.
        case choice([Option])
        /// Any of `options`, as an array of their values.
        case choices([Option])
        /// Values typed as a list, one per line (written as an array of strings).
        case lines
        /// Always this value, and nothing to type (a form step's `resultType`).
        case fixed(JSONValue)
        /// Always left out, and nothing to type: a mark saving the page clears (an imported
        /// activity's placeholder schedule, shown on the page that is saved).
        case cleared
        /// A calendar date, `yyyy-MM-dd`, in the browser's date input.
        case date
        /// A time of day, `HH:mm`, in the browser's time input.
        case time
        /// A local date and time, `yyyy-MM-ddTHH:mm`, in the browser's date-and-time input.
        case dateTime
        /// An instant the apps read with its offset (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`: a date question's
        /// earliest, latest and starting date), in the browser's date-and-time input on the study's
        /// clock, and written back with the study's offset at that instant.
        case appDateTime
        /// Times of day, as many as wanted, each in a time input (written as an array of strings).
        case times
        /// One of `options`, whose values are numbers (a weekday): written as a number.
        case numberChoice([Option])
        /// One of the things of the draft `reference` names (a step of the same activity, an
        /// activity); `none` labels the empty choice, which leaves the member out.
        case reference(FormReference, none: String)
    }

    /// Where the member is, from the item the field belongs to (the document, or a list's row).
    package var pointer: JSONPointer
    package var label: String
    package var help: String?
    package var kind: Kind
    /// The study's uploaded files this one-line field suggests as it is typed in, nil for none.
    package var suggests: Uploads?
    /// Whose clock a time of day or date and time is read on; the page says so beside the
    /// field. Nil for what is no time.
    package var zone: Zone?

    /// Whose clock a time is read on (docs/schedules.md).
    package enum Zone: Sendable {
        /// The study's time zone (an absolute schedule's dates and opening time, a notification
        /// at a time).
        case study
        /// Each participant's own (reminders' quiet hours, times counted from their date,
        /// daily windows).
        case participant
        /// The study's, except where the schedule counts from a participant's date.
        case studyUnlessAnchored
    }

    /// The same field, read on `zone`'s clock.
    package func inZone(_ zone: Zone) -> FormField {
        var field = self
        field.zone = zone
        return field
    }
    /// What the admin API takes when the member is left out (a study is enrolling unless it says
    /// otherwise), shown as the value so that saving an untouched page changes nothing.
    package var absent: JSONValue?

    package init(_ pointer: String, _ label: String, _ kind: Kind = .text, help: String? = nil, absent: JSONValue? = nil) {
        self.pointer = JSONPointer(pointer)!
        self.label = label
        self.kind = kind
        self.help = help
        self.absent = absent
        switch kind {
        case .time, .times, .dateTime, .appDateTime: zone = .study
        default: zone = nil
        }
    }

    /// A kind of the study's uploaded files: the page lists their addresses (a `datalist` whose
    /// id is the raw value) for the fields that suggest them.
    package enum Uploads: String, Sendable, CaseIterable {
        case images = "study-images"
        case pdfs = "study-pdfs"

        /// Whether a file of `contentType` is of this kind.
        package func includes(contentType: String) -> Bool {
            switch self {
            case .images: contentType.hasPrefix("image/")
            case .pdfs: contentType == "application/pdf"
            }
        }
    }

    /// The same field, offering the study's uploaded images as it is typed in.
    package func offeringImages() -> FormField {
        var field = self
        field.suggests = .images
        return field
    }

    /// The same field, offering the study's uploaded PDFs as it is typed in.
    package func offeringPDFs() -> FormField {
        var field = self
        field.suggests = .pdfs
        return field
    }

    /// The input's name for the field in the item at `prefix`.
    package func name(at prefix: JSONPointer) -> String { JSONPointer(tokens: prefix.tokens + pointer.tokens).description }

    // MARK: Reading the document

    /// The form's values for this field of `item` (whose own pointer is `prefix`).
    package func values(in item: JSONValue, at prefix: JSONPointer) -> [(name: String, value: String)] {
        let name = name(at: prefix)
        let current = item[pointer: pointer] ?? absent
        switch kind {
        case .text, .longText, .number, .choice, .date, .time, .dateTime, .appDateTime, .numberChoice, .reference:
            return [(name, current?.text ?? "")]
        case .times:
            guard case .array(let items) = current else { return [] }
            return items.compactMap { $0.text.map { (name, $0) } }
        case .localized:
            return [(name + "/en", Self.translation(current, "en")), (name + "/es", Self.translation(current, "es"))]
        case .checkbox:
            return current == .bool(true) ? [(name, "true")] : []
        case .yesNo:
            if case .bool(let value) = current { return [(name, value ? "true" : "false")] }
            return [(name, "")]
        case .choices:
            guard case .array(let items) = current else { return [] }
            return items.compactMap { $0.text.map { (name, $0) } }
        case .lines:
            guard case .array(let items) = current else { return [(name, "")] }
            return [(name, items.compactMap(\.text).joined(separator: "\n"))]
        case .fixed, .cleared:
            return []
        }
    }

    static func translation(_ value: JSONValue?, _ language: String) -> String {
        switch value {
        case .string(let text): language == "en" ? text : ""
        case .object(let translations): translations[language]?.text ?? ""
        default: ""
        }
    }

    // MARK: Writing the document

    /// Puts what the form says for this field into `item` (whose own pointer is `prefix`).
    package func apply(_ form: FormFields, at prefix: JSONPointer, to item: inout JSONValue) throws(JSONValue.PointerError) {
        let existing = item[pointer: pointer]
        let value = value(from: form, at: prefix, existing: existing)
        // A member left out stays out while the form says what leaving it out means.
        if existing == nil, let absent, value == absent { return }
        try item.set(value, at: pointer)
    }

    /// The JSON the form's inputs make, or nil when the member should be left out. `existing` is
    /// what the member holds now: where the form cannot tell two spellings of one meaning apart
    /// (an empty text and none; a translation map with English only and a plain string), the
    /// member keeps its spelling, so saving an untouched page changes nothing.
    package func value(
        from form: FormFields, at prefix: JSONPointer = JSONPointer(tokens: []), existing: JSONValue? = nil
    ) -> JSONValue? {
        let name = name(at: prefix)
        switch kind {
        case .text, .longText, .choice, .date, .time, .dateTime, .reference:
            let text = Self.trimmed(form[name])
            return text.isEmpty ? (existing == .string("") ? existing : nil) : .string(text)
        case .appDateTime:
            let text = Self.trimmed(form[name])
            if text.isEmpty { return existing == .string("") ? existing : nil }
            // Typed whole as the apps read it, or not a date and time at all: sent as it is, for
            // the admin API to take or name.
            guard let zone = form.timeZone, LocalTimes.dateTime(text) != nil else { return .string(text) }
            // The wall clock the page showed: the member keeps its spelling (and its offset).
            if case .string(let current) = existing, AppDates.wallClock(of: current, in: zone) == text { return existing }
            return .string(AppDates.text(wallClock: text, in: zone) ?? text)
        case .times:
            let times = form.all(name).map { Self.trimmed($0) }.filter { !$0.isEmpty }
            // No time given: the member stays out (or empty, as it was).
            if times.isEmpty { return existing == .array([]) ? existing : nil }
            return .array(times.map { .string($0) })
        case .number, .numberChoice:
            let text = Self.trimmed(form[name])
            if text.isEmpty { return nil }
            if let number = Double(text), number.isFinite { return .number(number) }
            return .string(text)
        case .localized:
            let english = Self.trimmed(form[name + "/en"])
            let spanish = Self.trimmed(form[name + "/es"])
            if case .object(var translations) = existing {
                // Other languages the form does not show are kept.
                translations["en"] = english.isEmpty ? nil : .string(english)
                translations["es"] = spanish.isEmpty ? nil : .string(spanish)
                return translations.isEmpty ? nil : .object(translations)
            }
            if spanish.isEmpty { return english.isEmpty ? (existing == .string("") ? existing : nil) : .string(english) }
            return .object(["en": .string(english), "es": .string(spanish)])
        case .checkbox:
            if form[name] == "true" { return .bool(true) }
            // Unchecked: false where the member is spelled out or defaults to true; else left out.
            if case .bool = existing { return .bool(false) }
            return absent == .bool(true) ? .bool(false) : nil
        case .yesNo:
            switch form[name] {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        case .choices(let options):
            let chosen = Set(form.all(name))
            return .array(options.filter { chosen.contains($0.value) }.map { .string($0.value) })
        case .lines:
            let lines = Self.trimmed(form[name]).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            return .array(lines.filter { !$0.isEmpty }.map { .string($0) })
        case .fixed(let value):
            return value
        case .cleared:
            return nil
        }
    }

    /// Line breaks as `\n` (browsers send `\r\n`), and no stray spaces around a value.
    package static func trimmed(_ text: String?) -> String {
        (text ?? "").replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
