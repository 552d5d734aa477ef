import Foundation
import ConsoleCore
import Mustache
import QRCode
import StudyModels

/// Markup written by `MarkupWriter` (`FormHTML`'s form elements, `SVGChart`'s charts), with every
/// value in it escaped, or a QR code's SVG: the one thing a template may draw unescaped
/// (`{{{form}}}`, `{{{chart}}}` and `{{{qr}}}`; `PageRenderer` refuses any other unescaped tag).
package struct SafeHTML: MustacheCustomRenderable, Sendable {
    package let renderText: String
    package var isNull: Bool { renderText.isEmpty }

    /// Only `MarkupWriter` and `PageRenderer` (a template's drawing) make one: everything in it was
    /// escaped as it was written.
    init(escapedMarkup html: String) {
        renderText = html
    }
}

extension SafeHTML {
    /// A QR code as an inline SVG: its markup holds only numbers, whatever the code says.
    static func qrCode(_ code: QRCode, moduleSize: Int) -> SafeHTML {
        SafeHTML(escapedMarkup: code.svg(moduleSize: moduleSize))
    }
}

/// The form elements of a page (fields, lists and their rows, groups, variants), written into one
/// string. The page around them is a Mustache template; the elements were Mustache partials too,
/// and drew a questionnaire's page at 150 pages a second on two cores, 78% of the time in
/// swift-mustache finding each value by name through dynamic casts. The elements are the bulk of
/// every builder page and nest (rows of rows), so they are written here. Markup goes through
/// `open`, whose attribute values are escaped, and text through `text`: both escape what
/// swift-mustache escapes (`& < > " '`).
package struct FormHTML {
    /// An attribute: a nil value leaves it out, an empty one is written bare (`checked`).
    typealias Attribute = MarkupWriter.Attribute

    private var markup = MarkupWriter()
    /// What has been written (literal markup is added to it directly).
    private var out: String {
        get { markup.out }
        _modify { yield &markup.out }
    }
    /// `/studies/<id>`: where a row's own page lies (an activity's, a step's).
    private let studyPath: String
    /// How many lists the element being written is in: a row's title is a heading one level
    /// below its list's (the page's own title is the `h1`, so a top-level list's rows are `h2`).
    private var listDepth = 0

    /// The study's time zone, which its times are read in (nil: a page of no study).
    private let timeZone: String?
    /// The same zone, which the apps' dates are shown on (`FieldView.onStudyClock`).
    private let zone: TimeZone?

    private init(studyPath: String, timeZone: String?) {
        self.studyPath = studyPath
        self.timeZone = timeZone
        zone = timeZone.flatMap(TimeZone.init(identifier:))
    }

    /// `timeZone`: the study's, said beside each time read on its clock.
    package static func render(_ elements: [ElementView], studyId: String?, timeZone: String? = nil) -> SafeHTML {
        var writer = FormHTML(studyPath: studyId.map { "/studies/" + AdminAPIClient.segment($0) } ?? "", timeZone: timeZone)
        for element in elements { writer.element(element) }
        return writer.markup.html
    }

    // MARK: Writing

    private mutating func text(_ value: String) { markup.text(value) }

    private mutating func open(_ name: String, _ attributes: [Attribute] = []) { markup.open(name, attributes) }

    private mutating func close(_ name: String) { markup.close(name) }

    private mutating func element(_ name: String, _ attributes: [Attribute] = [], text value: String) {
        markup.element(name, attributes, text: value)
    }

    /// `aria-invalid` and `aria-describedby` of an input whose field (`id`) has problems.
    private static func invalid(_ invalid: Bool, _ id: String) -> [Attribute] {
        invalid ? [("aria-invalid", "true"), ("aria-describedby", id + "-problems")] : []
    }

    private mutating func help(_ help: String, _ hasHelp: Bool) {
        if hasHelp { element("p", [("class", "help")], text: help) }
    }

    /// A list of problems; `id`: the field's, so its inputs can point at the list.
    private mutating func problems(_ problems: [String], id: String?) {
        guard !problems.isEmpty else { return }
        open("ul", [("class", "problems"), ("id", id.map { $0 + "-problems" })])
        for problem in problems { element("li", text: problem) }
        close("ul")
    }

    // MARK: Controls

    private mutating func label(_ label: String, for id: String, hidden: Bool = false) {
        element("label", [("class", hidden ? "visually-hidden" : nil), ("for", id)], text: label)
    }

    /// `field`: the id of the field whose problems describe the input when `invalid`.
    private mutating func input(
        id: String?, name: String, value: String, invalid: Bool, field: String, lang: String? = nil, numeric: Bool = false, type: String = "text",
        label: String? = nil, suggestions: String = ""
    ) {
        open("input", [("type", type), ("aria-label", label), ("inputmode", numeric ? "decimal" : nil), ("id", id), ("name", name), ("value", value), ("lang", lang), ("list", suggestions.isEmpty ? nil : suggestions)] + Self.invalid(invalid, field))
        out += "\n"
    }

    private mutating func textarea(id: String, name: String, rows: Int, value: String, invalid: Bool, field: String, lang: String? = nil) {
        element("textarea", [("id", id), ("name", name), ("rows", String(rows)), ("lang", lang)] + Self.invalid(invalid, field), text: value)
    }

    /// A checkbox inside its label; `hiddenLabel`: the label is for screen readers only.
    private mutating func checkbox(id: String?, name: String, value: String, checked: Bool, label: String, extra: [Attribute] = [], hiddenLabel: Bool = false) {
        open("label", [("class", "check"), ("for", id)])
        open("input", [("type", "checkbox"), ("id", id), ("name", name), ("value", value), ("checked", checked ? "" : nil)] + extra)
        if hiddenLabel {
            element("span", [("class", "visually-hidden")], text: label)
            out += "</label>"
        } else {
            out += " "
            text(label)
            close("label")
        }
    }

    /// A select; `show`: the id of the button that shows the chosen case's fields (a variant).
    private mutating func select(id: String, name: String, options: [FieldView.OptionView], invalid: Bool, show: String?, empty: String = "Choose…") {
        open("select", [("id", id), ("name", name), ("data-show", show)] + Self.invalid(invalid, id))
        out += "\n"
        element("option", [("value", "")], text: empty)
        out += "\n"
        for option in options {
            element("option", [("value", option.value), ("selected", option.selected ? "" : nil)], text: option.label)
        }
        close("select")
    }

    private mutating func button(op: String, label: String, cssClass: String, disabled: Bool = false, ariaLabel: String? = nil, id: String? = nil) {
        element(
            "button",
            [("type", "submit"), ("name", "op"), ("value", op), ("class", cssClass), ("id", id), ("disabled", disabled ? "" : nil), ("aria-label", ariaLabel)],
            text: label)
    }

    private mutating func hidden(_ name: String, _ value: String) {
        open("input", [("type", "hidden"), ("name", name), ("value", value)])
        out += "\n"
    }

    /// A variant's select with its "Show its fields" button (for pages without JavaScript) and
    /// the marker of the case drawn.
    private mutating func variantChoice(_ variant: VariantView, showLabel: String, showAriaLabel: String?) {
        open("div", [("class", "variant-choice")])
        select(id: variant.id, name: variant.name, options: variant.options, invalid: variant.invalid, show: variant.id + "-show")
        button(op: variant.showOp, label: showLabel, cssClass: "small", ariaLabel: showAriaLabel, id: variant.id + "-show")
        close("div")
        hidden(variant.markerName, variant.markerValue)
    }

    /// A row's buttons (up, down, remove) and where the row came from.
    private mutating func rowActions(_ row: ListView.RowView) {
        button(op: row.upOp, label: "Up", cssClass: "small", disabled: row.isFirst, ariaLabel: "Move \(row.title) up")
        button(op: row.downOp, label: "Down", cssClass: "small", disabled: row.isLast, ariaLabel: "Move \(row.title) down")
        button(op: row.removeOp, label: "Remove", cssClass: "small remove", ariaLabel: "Remove \(row.title)")
        hidden(row.fromName, row.fromValue)
    }

    /// The `<div>` around a field or variant, with the id its problems link to.
    private mutating func wrapper(_ kind: String, id: String, invalid: Bool) {
        open("div", [("class", invalid ? kind + " invalid" : kind), ("id", id + "-field")])
    }

    // MARK: Elements

    private mutating func element(_ element: ElementView) {
        for field in element.field { self.field(field) }
        for list in element.list { self.list(list) }
        for group in element.group { self.group(group) }
        for variant in element.variant { self.variant(variant) }
    }

    private mutating func field(_ field: FieldView) {
        let field = field.onStudyClock(zone)
        // A fixed value has nothing to type or read; it is drawn only to carry its problems.
        if field.isFixed, !field.invalid { return }
        wrapper("field", id: field.id, invalid: field.invalid)
        out += "\n"
        if field.readOnly {
            element("span", [("class", "label")], text: field.label)
            shownValue(field)
        } else if field.isLocalized {
            localized(field)
        } else if field.isCheckbox {
            checkbox(id: field.id, name: field.name, value: "true", checked: field.checked, label: field.label, extra: Self.invalid(field.invalid, field.id))
            out += "\n"
        } else if field.isChoices {
            open("fieldset", [("id", field.id), ("aria-describedby", field.invalid ? field.id + "-problems" : nil)])
            element("legend", text: field.label)
            for option in field.options {
                checkbox(id: nil, name: field.name, value: option.value, checked: option.selected, label: option.label)
            }
            close("fieldset")
        } else if field.isTimes {
            times(field)
        } else if !field.isFixed {
            label(field.label, for: field.id)
            control(field)
        }
        if let zone = field.zone { element("p", [("class", "help zone"), ("id", field.id + "-zone")], text: zoneNote(zone)) }
        help(field.help, field.hasHelp)
        problems(field.problems, id: field.id)
        close("div")
    }

    /// Whose clock a time is read on, in words, with the study's zone by name.
    private func zoneNote(_ zone: FormField.Zone) -> String {
        let study = timeZone.map { "\($0) time, the study's time zone" } ?? "The study's time zone"
        switch zone {
        case .study: return study.prefix(1).uppercased() + study.dropFirst() + "."
        case .participant: return "Each participant's own time (their phone's time zone)."
        case .studyUnlessAnchored:
            return study.prefix(1).uppercased() + study.dropFirst() + "; counted from a participant's date, their own time."
        }
    }

    /// A field's value as a viewer reads it.
    private mutating func shownValue(_ field: FieldView) {
        open("div", [("class", "value")])
        if field.shown.isEmpty { out += "<span class=\"none\">not set</span>" } else { text(field.shown) }
        if field.isLocalized, field.spanish, !field.valueEs.isEmpty { element("div", [("class", "es"), ("lang", "es")], text: field.valueEs) }
        close("div")
    }

    /// The input of a text, number, choice, lines or long-text field.
    private mutating func control(_ field: FieldView) {
        if field.isChoice {
            select(id: field.id, name: field.name, options: field.options, invalid: field.invalid, show: nil, empty: field.emptyLabel)
        } else if field.isLongText || field.isLines {
            textarea(id: field.id, name: field.name, rows: field.isLines ? 4 : 6, value: field.value, invalid: field.invalid, field: field.id)
        } else {
            input(
                id: field.id, name: field.name, value: field.value, invalid: field.invalid, field: field.id, numeric: field.isNumber,
                type: field.inputType, suggestions: field.suggestions)
        }
    }

    /// Times of day: one time input for each the field holds, and two empty ones to add more
    /// (console.js adds another empty one as the last is filled; without it, saving adds two).
    private mutating func times(_ field: FieldView) {
        open("fieldset", [("class", "times"), ("id", field.id)] + (field.invalid ? [("aria-describedby", field.id + "-problems")] : []))
        element("legend", text: field.label)
        for (index, time) in (field.times + ["", ""]).enumerated() {
            let type = FieldView.browserInputType(.time, for: time)
            input(
                id: nil, name: field.name, value: time, invalid: field.invalid, field: field.id, type: type,
                label: "\(field.label): time \(index + 1)")
        }
        close("fieldset")
    }

    /// English, and Spanish beside it when the study offers Spanish.
    private mutating func localized(_ field: FieldView) {
        open("div", [("class", field.spanish ? "localized two" : "localized")])
        for language in field.spanish ? ["en", "es"] : ["en"] {
            let id = field.id + "-" + language
            let (value, invalid, lang) = language == "en" ? (field.value, field.invalid, nil) : (field.valueEs, false, "es")
            open("div")
            open("label", [("for", id)])
            text(field.label)
            if field.spanish { out += language == "en" ? " <span class=\"lang\">English</span>" : " <span class=\"lang\">Spanish</span>" }
            close("label")
            if field.long {
                textarea(id: id, name: field.name + "/" + language, rows: 5, value: value, invalid: invalid, field: field.id, lang: lang)
            } else {
                input(
                    id: id, name: field.name + "/" + language, value: value, invalid: invalid, field: field.id, lang: lang,
                    suggestions: field.suggestions)
            }
            close("div")
        }
        close("div")
    }

    private mutating func list(_ list: ListView) {
        open("fieldset", [("class", "list" + (list.table ? " table" : "") + (list.listInvalid ? " invalid" : "")), ("id", list.id + "-field")])
        element("legend", text: list.label)
        help(list.help, list.hasHelp)
        problems(list.listProblems, id: nil)
        if !list.readOnly { hidden(list.countName, String(list.count)) }
        if !list.hasRows { out += "<p class=\"none\">None yet.</p>\n" }
        if list.table {
            table(list)
        } else {
            listDepth += 1
            defer { listDepth -= 1 }
            for row in list.rows { listRow(row, readOnly: list.readOnly) }
            for row in list.newRow {
                newRowTemplate(list)
                listRow(row, readOnly: false)
                close("template")
            }
        }
        if !list.readOnly { button(op: list.addOp, label: list.addLabel, cssClass: "add") }
        close("fieldset")
    }

    /// The `<template>` around a list's new row, with what the script fills in and the most rows
    /// a list may have.
    private mutating func newRowTemplate(_ list: ListView) {
        open("template", [
            ("class", "new-row"), ("data-op", list.addOp), ("data-token", list.newRowToken), ("data-number", list.newRowNumber),
            ("data-max", String(FormList.maxRows)),
        ])
    }

    /// A row of a list drawn as rows (not a table): its title and buttons, then its elements.
    private mutating func listRow(_ row: ListView.RowView, readOnly: Bool) {
        open("div", [("class", row.rowInvalid ? "row invalid" : "row"), ("id", row.id + "-field")])
        open("div", [("class", "row-head")])
        element("h\(min(6, 1 + listDepth))", [("class", "row-title")], text: row.title)
        if !readOnly {
            open("div", [("class", "row-actions")])
            rowActions(row)
            close("div")
        }
        close("div")
        problems(row.rowProblems, id: nil)
        if row.hasRowPage {
            open("p", [("class", "row-page")])
            element("a", [("href", studyPath + "/" + row.rowPage)], text: row.rowPageLabel)
            close("p")
        }
        for element in row.elements { self.element(element) }
        if row.hasMark { mark(row, readOnly: readOnly) }
        close("div")
    }

    /// A row's tick box (a choice ticked as a correct answer).
    private mutating func mark(_ row: ListView.RowView, readOnly: Bool) {
        if readOnly {
            if row.marked { element("p", [("class", "mark")], text: row.markLabel) }
            return
        }
        open("div", [("class", "field mark")])
        checkbox(id: row.id + "-mark", name: row.markName, value: "true", checked: row.marked, label: row.markLabel)
        close("div")
    }

    /// A list's rows as a table: a line per row, a column per element, the controls labelled
    /// for screen readers only (naming their row), the row's buttons at the end.
    private mutating func table(_ list: ListView) {
        // Without rows the table is there (hidden) all the same, for a row added by the script.
        out += list.hasRows ? "<table class=\"rows\">\n<thead><tr><th scope=\"col\">#</th>" : "<table class=\"rows\" hidden>\n<thead><tr><th scope=\"col\">#</th>"
        for column in list.columns { element("th", [("scope", "col")], text: column) }
        if !list.readOnly { out += "<th scope=\"col\"><span class=\"visually-hidden\">Order and removal</span></th>" }
        out += "</tr></thead>\n<tbody>\n"
        for (index, row) in list.rows.enumerated() { tableRow(row, number: String(index + 1), readOnly: list.readOnly) }
        out += "</tbody></table>\n"
        for row in list.newRow {
            newRowTemplate(list)
            tableRow(row, number: list.newRowNumber, readOnly: false)
            close("template")
        }
    }

    /// A row of a table: its number (and its page's link), a cell per element, its buttons.
    private mutating func tableRow(_ row: ListView.RowView, number: String, readOnly: Bool) {
        open("tr", [("class", row.rowInvalid ? "invalid" : nil), ("id", row.id + "-field")])
        open("th", [("scope", "row")])
        out += number
        if row.hasRowPage {
            out += " "
            element("a", [("class", "row-open"), ("href", studyPath + "/" + row.rowPage), ("aria-label", row.rowPageLabel)], text: "Open")
        }
        problems(row.rowProblems, id: nil)
        close("th")
        for element in row.elements {
            open("td")
            cell(element, row: row.title)
            close("td")
        }
        if !readOnly {
            open("td", [("class", "row-actions")])
            rowActions(row)
            close("td")
        }
        close("tr")
    }

    /// One element in a table's cell: the control alone, labelled for screen readers as
    /// "<label> of <row>", with its problems under it. (A list or group in a row is drawn whole.)
    private mutating func cell(_ element: ElementView, row: String) {
        for field in element.field where !(field.isFixed && !field.invalid) {
            wrapper("field", id: field.id, invalid: field.invalid)
            let name = "\(field.label) of \(row)"
            if field.readOnly {
                shownValue(field)
            } else if field.isLocalized {
                for language in field.spanish ? ["en", "es"] : ["en"] {
                    let id = field.id + "-" + language
                    label(name + (field.spanish ? (language == "en" ? " (English)" : " (Spanish)") : ""), for: id, hidden: true)
                    input(
                        id: id, name: field.name + "/" + language, value: language == "en" ? field.value : field.valueEs,
                        invalid: language == "en" && field.invalid, field: field.id, lang: language == "en" ? nil : "es")
                }
            } else if field.isCheckbox {
                checkbox(id: field.id, name: field.name, value: "true", checked: field.checked, label: name, extra: Self.invalid(field.invalid, field.id), hiddenLabel: true)
            } else if !field.isFixed {
                label(name, for: field.id, hidden: true)
                control(field)
            }
            problems(field.problems, id: field.id)
            close("div")
        }
        for variant in element.variant {
            wrapper("variant", id: variant.id, invalid: variant.invalid)
            if variant.readOnly {
                text(variant.shown)
            } else {
                label("\(variant.label) of \(row)", for: variant.id, hidden: true)
                variantChoice(variant, showLabel: "Show", showAriaLabel: "Show the fields of the chosen \(variant.label.lowercased()) of \(row)")
            }
            problems(variant.problems, id: variant.id)
            for nested in variant.elements { cell(nested, row: row) }
            close("div")
        }
        for list in element.list { self.list(list) }
        for group in element.group { self.group(group) }
    }

    private mutating func group(_ group: GroupView) {
        open("fieldset", [("class", "group"), ("id", group.id + "-field")])
        element("legend", text: group.label)
        help(group.help, group.hasHelp)
        if group.readOnly {
            element("p", [("class", "value")], text: "\(group.toggle): \(group.shown)")
        } else {
            hidden(group.markerName, "1")
            checkbox(
                id: group.id + "-on", name: group.toggleName, value: "true", checked: group.on, label: group.toggle,
                extra: [("data-toggles", group.id + "-body")])
        }
        open("div", [("class", "group-body"), ("id", group.id + "-body")])
        out += "\n"
        for element in group.elements { self.element(element) }
        close("div")
        close("fieldset")
    }

    private mutating func variant(_ variant: VariantView) {
        wrapper("variant", id: variant.id, invalid: variant.invalid)
        out += "\n"
        if variant.readOnly {
            element("span", [("class", "label")], text: variant.label)
            element("div", [("class", "value")], text: variant.shown)
        } else {
            label(variant.label, for: variant.id)
            variantChoice(variant, showLabel: "Show its fields", showAriaLabel: nil)
        }
        help(variant.help, variant.hasHelp)
        problems(variant.problems, id: variant.id)
        open("div", [("class", "variant-body")])
        out += "\n"
        for element in variant.elements { self.element(element) }
        close("div")
        close("div")
    }
}
