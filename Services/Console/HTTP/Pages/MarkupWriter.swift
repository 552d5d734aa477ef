import StudyModels

/// Markup written by hand, for the parts of pages written in code rather than templates (form
/// elements, charts): element names are literals of the writer's caller, and every text and
/// attribute value goes through `HTMLText.escape` (`& < > " '` as character references), so
/// what is written is safe to draw unescaped as `SafeHTML`.
struct MarkupWriter {
    /// An attribute: a nil value leaves it out, an empty one is written bare (`checked`).
    typealias Attribute = (name: String, value: String?)

    /// What has been written.
    var out = ""

    init(capacity: Int = 16 * 1024) {
        out.reserveCapacity(capacity)
    }

    /// `value` escaped: safe in text and in quoted attributes.
    mutating func text(_ value: String) {
        HTMLText.escape(value, into: &out)
    }

    /// `<name attributes…>`; the name is always a literal of the caller.
    mutating func open(_ name: String, _ attributes: [Attribute] = [], selfClosing: Bool = false) {
        out += "<"
        out += name
        for attribute in attributes {
            guard let value = attribute.value else { continue }
            out += " "
            out += attribute.name
            if !value.isEmpty {
                out += "=\""
                text(value)
                out += "\""
            }
        }
        out += selfClosing ? "/>" : ">"
    }

    /// `</name>`, then a new line unless `newline` is false (inside a table row or a line of text).
    mutating func close(_ name: String, newline: Bool = true) {
        out += "</"
        out += name
        out += newline ? ">\n" : ">"
    }

    /// An element holding only text.
    mutating func element(_ name: String, _ attributes: [Attribute] = [], text value: String) {
        open(name, attributes)
        text(value)
        close(name)
    }

    /// The markup, to be drawn unescaped.
    var html: SafeHTML { SafeHTML(escapedMarkup: out) }
}
