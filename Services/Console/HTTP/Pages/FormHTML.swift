import ConsoleCore
import Mustache

/// HTML drawn by `FormHTML`, with every value in it escaped: the one thing a template may draw
/// unescaped (`{{{form}}}`; `PageRenderer` refuses templates with any other unescaped tag).
package struct SafeHTML: MustacheCustomRenderable, Sendable {
    package let renderText: String
    package var isNull: Bool { renderText.isEmpty }

    fileprivate init(_ html: String) {
        renderText = html
    }
}

/// The form elements of a page (fields, lists and their rows, groups, variants), written into one
/// string. The page around them is a Mustache template; the elements were Mustache partials too,
/// and drew a questionnaire's page at 150 pages a second on two cores, 78% of the time in
/// swift-mustache finding each value by name through dynamic casts. The elements are the bulk of
/// every builder page and nest (rows of rows), so they are written here: literal markup as
/// written, every value through `escaped`, which escapes what swift-mustache escapes.
package struct FormHTML {
    private var out = ""
    /// `/studies/<id>`: where a row's own page lies (an activity's, a step's).
    private let studyPath: String

    private init(studyPath: String) {
        self.studyPath = studyPath
        out.reserveCapacity(16 * 1024)
    }

    package static func render(_ elements: [ElementView], studyId: String?) -> SafeHTML {
        var writer = FormHTML(studyPath: studyId.map { "/studies/" + AdminAPIClient.segment($0) } ?? "")
        for element in elements { writer.element(element) }
        return SafeHTML(writer.out)
    }

    // MARK: Escaping

    /// `value` with `& < > " '` as character references: safe in text and in quoted attributes.
    static func escape(_ value: String, into out: inout String) {
        guard value.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            out += value
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
    }

    private mutating func escaped(_ value: String) {
        Self.escape(value, into: &out)
    }

    /// Marks an input invalid and points it at the field's problems (`id`: the field's).
    private mutating func invalidAttributes(_ invalid: Bool, id: String) {
        guard invalid else { return }
        out += " aria-invalid=\"true\" aria-describedby=\""
        escaped(id)
        out += "-problems\""
    }

    private mutating func help(_ help: String, _ hasHelp: Bool) {
        guard hasHelp else { return }
        out += "<p class=\"help\">"
        escaped(help)
        out += "</p>\n"
    }

    private mutating func problems(_ problems: [String], id: String?) {
        guard !problems.isEmpty else { return }
        out += "<ul class=\"problems\""
        if let id {
            out += " id=\""
            escaped(id)
            out += "-problems\""
        }
        out += ">"
        for problem in problems {
            out += "<li>"
            escaped(problem)
            out += "</li>"
        }
        out += "</ul>\n"
    }

    // MARK: Elements

    private mutating func element(_ element: ElementView) {
        for field in element.field { self.field(field) }
        for list in element.list { self.list(list) }
        for group in element.group { self.group(group) }
        for variant in element.variant { self.variant(variant) }
    }

    private mutating func field(_ field: FieldView) {
        // A fixed value has nothing to type or read; it is drawn only to carry its problems.
        if field.isFixed, !field.invalid { return }
        out += field.invalid ? "<div class=\"field invalid\" id=\"" : "<div class=\"field\" id=\""
        escaped(field.id)
        out += "-field\">\n"
        if field.readOnly {
            out += "<span class=\"label\">"
            escaped(field.label)
            out += "</span><div class=\"value\">"
            if field.shown.isEmpty { out += "<span class=\"none\">not set</span>" } else { escaped(field.shown) }
            if field.isLocalized, field.spanish {
                out += "<div class=\"es\" lang=\"es\">"
                escaped(field.valueEs)
                out += "</div>"
            }
            out += "</div>\n"
        } else if field.isLocalized {
            localized(field)
        } else if field.isCheckbox {
            out += "<label class=\"check\" for=\""
            escaped(field.id)
            out += "\"><input type=\"checkbox\" id=\""
            escaped(field.id)
            out += "\" name=\""
            escaped(field.name)
            out += "\" value=\"true\""
            if field.checked { out += " checked" }
            invalidAttributes(field.invalid, id: field.id)
            out += "> "
            escaped(field.label)
            out += "</label>\n"
        } else if field.isChoices {
            out += "<fieldset id=\""
            escaped(field.id)
            out += "\""
            if field.invalid {
                out += " aria-describedby=\""
                escaped(field.id)
                out += "-problems\""
            }
            out += "><legend>"
            escaped(field.label)
            out += "</legend>\n"
            for option in field.options {
                out += "<label class=\"check\"><input type=\"checkbox\" name=\""
                escaped(field.name)
                out += "\" value=\""
                escaped(option.value)
                out += option.selected ? "\" checked> " : "\"> "
                escaped(option.label)
                out += "</label>\n"
            }
            out += "</fieldset>\n"
        } else if !field.isFixed {
            label(field.label, for: field.id)
            if field.isChoice {
                select(id: field.id, name: field.name, options: field.options, invalid: field.invalid, show: nil)
            } else if field.isLongText || field.isLines {
                textarea(id: field.id, name: field.name, rows: field.isLines ? 4 : 6, value: field.value, invalid: field.invalid, field: field.id, lang: nil)
            } else {
                input(id: field.id, name: field.name, value: field.value, invalid: field.invalid, field: field.id, lang: nil, numeric: field.isNumber)
            }
        }
        help(field.help, field.hasHelp)
        problems(field.problems, id: field.id)
        out += "</div>\n"
    }

    /// English, and Spanish beside it when the study offers Spanish.
    private mutating func localized(_ field: FieldView) {
        out += field.spanish ? "<div class=\"localized two\">\n<div>" : "<div class=\"localized\">\n<div>"
        out += "<label for=\""
        escaped(field.id)
        out += "-en\">"
        escaped(field.label)
        out += field.spanish ? " <span class=\"lang\">English</span></label>\n" : "</label>\n"
        if field.long {
            textarea(id: field.id + "-en", name: field.name + "/en", rows: 5, value: field.value, invalid: field.invalid, field: field.id, lang: nil)
        } else {
            input(id: field.id + "-en", name: field.name + "/en", value: field.value, invalid: field.invalid, field: field.id, lang: nil, numeric: false)
        }
        out += "</div>\n"
        if field.spanish {
            out += "<div><label for=\""
            escaped(field.id)
            out += "-es\">"
            escaped(field.label)
            out += " <span class=\"lang\">Spanish</span></label>\n"
            if field.long {
                textarea(id: field.id + "-es", name: field.name + "/es", rows: 5, value: field.valueEs, invalid: false, field: field.id, lang: "es")
            } else {
                input(id: field.id + "-es", name: field.name + "/es", value: field.valueEs, invalid: false, field: field.id, lang: "es", numeric: false)
            }
            out += "</div>\n"
        }
        out += "</div>\n"
    }

    private mutating func label(_ label: String, for id: String) {
        out += "<label for=\""
        escaped(id)
        out += "\">"
        escaped(label)
        out += "</label>\n"
    }

    /// `field`: the id of the field whose problems describe the input when `invalid`.
    private mutating func input(id: String, name: String, value: String, invalid: Bool, field: String, lang: String?, numeric: Bool) {
        out += numeric ? "<input type=\"text\" inputmode=\"decimal\" id=\"" : "<input type=\"text\" id=\""
        escaped(id)
        out += "\" name=\""
        escaped(name)
        out += "\" value=\""
        escaped(value)
        out += "\""
        if let lang { out += " lang=\"\(lang)\"" }
        invalidAttributes(invalid, id: field)
        out += ">\n"
    }

    private mutating func textarea(id: String, name: String, rows: Int, value: String, invalid: Bool, field: String, lang: String?) {
        out += "<textarea id=\""
        escaped(id)
        out += "\" name=\""
        escaped(name)
        out += "\" rows=\"\(rows)\""
        if let lang { out += " lang=\"\(lang)\"" }
        invalidAttributes(invalid, id: field)
        out += ">"
        escaped(value)
        out += "</textarea>\n"
    }

    /// A select; `show`: the id of the button that shows the chosen case's fields (a variant).
    private mutating func select(id: String, name: String, options: [FieldView.OptionView], invalid: Bool, show: String?) {
        out += "<select id=\""
        escaped(id)
        out += "\" name=\""
        escaped(name)
        out += "\""
        if let show {
            out += " data-show=\""
            escaped(show)
            out += "\""
        }
        invalidAttributes(invalid, id: id)
        out += ">\n<option value=\"\">Choose…</option>\n"
        for option in options {
            out += "<option value=\""
            escaped(option.value)
            out += option.selected ? "\" selected>" : "\">"
            escaped(option.label)
            out += "</option>\n"
        }
        out += "</select>\n"
    }

    private mutating func button(op: String, label: String, cssClass: String, disabled: Bool = false, ariaLabel: String? = nil, id: String? = nil) {
        out += "<button type=\"submit\" name=\"op\" value=\""
        escaped(op)
        out += "\" class=\"\(cssClass)\""
        if let id {
            out += " id=\""
            escaped(id)
            out += "\""
        }
        if disabled { out += " disabled" }
        if let ariaLabel {
            out += " aria-label=\""
            escaped(ariaLabel)
            out += "\""
        }
        out += ">"
        escaped(label)
        out += "</button>\n"
    }

    private mutating func hidden(_ name: String, _ value: String) {
        out += "<input type=\"hidden\" name=\""
        escaped(name)
        out += "\" value=\""
        escaped(value)
        out += "\">\n"
    }

    private mutating func list(_ list: ListView) {
        if list.table {
            table(list)
            return
        }
        out += list.listInvalid ? "<fieldset class=\"list invalid\" id=\"" : "<fieldset class=\"list\" id=\""
        escaped(list.id)
        out += "-field\">\n<legend>"
        escaped(list.label)
        out += "</legend>\n"
        help(list.help, list.hasHelp)
        problems(list.listProblems, id: nil)
        if !list.readOnly { hidden(list.countName, String(list.count)) }
        for row in list.rows {
            out += row.rowInvalid ? "<div class=\"row invalid\" id=\"" : "<div class=\"row\" id=\""
            escaped(row.id)
            out += "-field\">\n<div class=\"row-head\">\n<h3 class=\"row-title\">"
            escaped(row.title)
            out += "</h3>\n"
            if !list.readOnly {
                out += "<div class=\"row-actions\">\n"
                button(op: row.upOp, label: "Up", cssClass: "small", disabled: row.isFirst, ariaLabel: "Move \(row.title) up")
                button(op: row.downOp, label: "Down", cssClass: "small", disabled: row.isLast, ariaLabel: "Move \(row.title) down")
                button(op: row.removeOp, label: "Remove", cssClass: "small remove", ariaLabel: "Remove \(row.title)")
                out += "</div>\n"
                hidden(row.fromName, row.fromValue)
            }
            out += "</div>\n"
            problems(row.rowProblems, id: nil)
            if row.hasRowPage {
                out += "<p class=\"row-page\"><a href=\""
                escaped(studyPath + "/" + row.rowPage)
                out += "\">"
                escaped(row.rowPageLabel)
                out += "</a></p>\n"
            }
            for element in row.elements { self.element(element) }
            out += "</div>\n"
        }
        if !list.hasRows { out += "<p class=\"none\">None yet.</p>\n" }
        if !list.readOnly { button(op: list.addOp, label: list.addLabel, cssClass: "add") }
        out += "</fieldset>\n"
    }

    /// A list as a table: a line per row, a column per element, its controls without visible
    /// labels (each has one for screen readers, naming its row), the row's buttons at the end.
    private mutating func table(_ list: ListView) {
        out += list.listInvalid ? "<fieldset class=\"list table invalid\" id=\"" : "<fieldset class=\"list table\" id=\""
        escaped(list.id)
        out += "-field\">\n<legend>"
        escaped(list.label)
        out += "</legend>\n"
        help(list.help, list.hasHelp)
        problems(list.listProblems, id: nil)
        if !list.readOnly { hidden(list.countName, String(list.count)) }
        if list.hasRows {
            out += "<table class=\"rows\">\n<thead><tr><th scope=\"col\">#</th>"
            for column in list.columns {
                out += "<th scope=\"col\">"
                escaped(column)
                out += "</th>"
            }
            out += list.readOnly ? "</tr></thead>\n<tbody>\n" : "<th scope=\"col\"><span class=\"visually-hidden\">Order and removal</span></th></tr></thead>\n<tbody>\n"
            for (index, row) in list.rows.enumerated() {
                out += row.rowInvalid ? "<tr class=\"invalid\" id=\"" : "<tr id=\""
                escaped(row.id)
                out += "-field\"><th scope=\"row\">\(index + 1)"
                if row.hasRowPage {
                    out += " <a class=\"row-open\" href=\""
                    escaped(studyPath + "/" + row.rowPage)
                    out += "\" aria-label=\""
                    escaped(row.rowPageLabel)
                    out += "\">Open</a>"
                }
                problems(row.rowProblems, id: nil)
                out += "</th>"
                for element in row.elements {
                    out += "<td>"
                    cell(element, row: row.title)
                    out += "</td>"
                }
                if !list.readOnly {
                    out += "<td class=\"row-actions\">"
                    button(op: row.upOp, label: "Up", cssClass: "small", disabled: row.isFirst, ariaLabel: "Move \(row.title) up")
                    button(op: row.downOp, label: "Down", cssClass: "small", disabled: row.isLast, ariaLabel: "Move \(row.title) down")
                    button(op: row.removeOp, label: "Remove", cssClass: "small remove", ariaLabel: "Remove \(row.title)")
                    hidden(row.fromName, row.fromValue)
                    out += "</td>"
                }
                out += "</tr>\n"
            }
            out += "</tbody></table>\n"
        } else {
            out += "<p class=\"none\">None yet.</p>\n"
        }
        if !list.readOnly { button(op: list.addOp, label: list.addLabel, cssClass: "add") }
        out += "</fieldset>\n"
    }

    /// One element in a table's cell: the control alone, labelled for screen readers as
    /// "<label> of <row>", with its problems under it. (A nested list or group in a table row
    /// is drawn whole.)
    private mutating func cell(_ element: ElementView, row: String) {
        for field in element.field where !(field.isFixed && !field.invalid) {
            out += field.invalid ? "<div class=\"field invalid\" id=\"" : "<div class=\"field\" id=\""
            escaped(field.id)
            out += "-field\">"
            if field.readOnly {
                if field.shown.isEmpty { out += "<span class=\"none\">not set</span>" } else { escaped(field.shown) }
                if field.isLocalized, field.spanish, !field.valueEs.isEmpty {
                    out += "<div class=\"es\" lang=\"es\">"
                    escaped(field.valueEs)
                    out += "</div>"
                }
            } else if field.isLocalized {
                hiddenLabel("\(field.label) of \(row)" + (field.spanish ? " (English)" : ""), for: field.id + "-en")
                input(id: field.id + "-en", name: field.name + "/en", value: field.value, invalid: field.invalid, field: field.id, lang: nil, numeric: false)
                if field.spanish {
                    hiddenLabel("\(field.label) of \(row) (Spanish)", for: field.id + "-es")
                    input(id: field.id + "-es", name: field.name + "/es", value: field.valueEs, invalid: false, field: field.id, lang: "es", numeric: false)
                }
            } else if field.isChoice {
                hiddenLabel("\(field.label) of \(row)", for: field.id)
                select(id: field.id, name: field.name, options: field.options, invalid: field.invalid, show: nil)
            } else if field.isCheckbox {
                out += "<label class=\"check\"><input type=\"checkbox\" id=\""
                escaped(field.id)
                out += "\" name=\""
                escaped(field.name)
                out += field.checked ? "\" value=\"true\" checked" : "\" value=\"true\""
                invalidAttributes(field.invalid, id: field.id)
                out += "><span class=\"visually-hidden\"> "
                escaped("\(field.label) of \(row)")
                out += "</span></label>"
            } else if !field.isFixed {
                hiddenLabel("\(field.label) of \(row)", for: field.id)
                input(id: field.id, name: field.name, value: field.value, invalid: field.invalid, field: field.id, lang: nil, numeric: field.isNumber)
            }
            problems(field.problems, id: field.id)
            out += "</div>"
        }
        for variant in element.variant {
            out += variant.invalid ? "<div class=\"variant invalid\" id=\"" : "<div class=\"variant\" id=\""
            escaped(variant.id)
            out += "-field\">"
            if variant.readOnly {
                escaped(variant.shown)
            } else {
                hiddenLabel("\(variant.label) of \(row)", for: variant.id)
                out += "<div class=\"variant-choice\">"
                select(id: variant.id, name: variant.name, options: variant.options, invalid: variant.invalid, show: variant.id + "-show")
                button(op: variant.showOp, label: "Show", cssClass: "small", ariaLabel: "Show the fields of the chosen \(variant.label.lowercased()) of \(row)", id: variant.id + "-show")
                out += "</div>"
                hidden(variant.markerName, variant.markerValue)
            }
            problems(variant.problems, id: variant.id)
            for nested in variant.elements { cell(nested, row: row) }
            out += "</div>"
        }
        for list in element.list { self.list(list) }
        for group in element.group { self.group(group) }
    }

    private mutating func hiddenLabel(_ label: String, for id: String) {
        out += "<label class=\"visually-hidden\" for=\""
        escaped(id)
        out += "\">"
        escaped(label)
        out += "</label>"
    }

    private mutating func group(_ group: GroupView) {
        out += "<fieldset class=\"group\" id=\""
        escaped(group.id)
        out += "-field\">\n<legend>"
        escaped(group.label)
        out += "</legend>\n"
        help(group.help, group.hasHelp)
        if group.readOnly {
            out += "<p class=\"value\">"
            escaped(group.toggle)
            out += ": "
            escaped(group.shown)
            out += "</p>\n"
        } else {
            hidden(group.markerName, "1")
            out += "<label class=\"check\" for=\""
            escaped(group.id)
            out += "-on\"><input type=\"checkbox\" id=\""
            escaped(group.id)
            out += "-on\" name=\""
            escaped(group.toggleName)
            out += "\" value=\"true\" data-toggles=\""
            escaped(group.id)
            out += group.on ? "-body\" checked> " : "-body\"> "
            escaped(group.toggle)
            out += "</label>\n"
        }
        out += "<div class=\"group-body\" id=\""
        escaped(group.id)
        out += "-body\">\n"
        for element in group.elements { self.element(element) }
        out += "</div>\n</fieldset>\n"
    }

    private mutating func variant(_ variant: VariantView) {
        out += variant.invalid ? "<div class=\"variant invalid\" id=\"" : "<div class=\"variant\" id=\""
        escaped(variant.id)
        out += "-field\">\n"
        if variant.readOnly {
            out += "<span class=\"label\">"
            escaped(variant.label)
            out += "</span><div class=\"value\">"
            escaped(variant.shown)
            out += "</div>\n"
        } else {
            label(variant.label, for: variant.id)
            out += "<div class=\"variant-choice\">\n"
            select(id: variant.id, name: variant.name, options: variant.options, invalid: variant.invalid, show: variant.id + "-show")
            button(op: variant.showOp, label: "Show its fields", cssClass: "small", id: variant.id + "-show")
            out += "</div>\n"
            hidden(variant.markerName, variant.markerValue)
        }
        help(variant.help, variant.hasHelp)
        problems(variant.problems, id: variant.id)
        out += "<div class=\"variant-body\">\n"
        for element in variant.elements { self.element(element) }
        out += "</div>\n</div>\n"
    }
}
