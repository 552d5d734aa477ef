import JSONText
import NIOCore
import StudyModels

/// An exported row's line, written byte by byte from the cells PostgreSQL sends: each value
/// arrives as JSON text (`to_json`), which a JSON line carries as it is and a CSV field unquotes.
/// Nothing is built as `String` on the way: an export writes every row of a study, and a download
/// cancelled after its first bytes should have cost little.
package enum ExportLines {
    /// `{"table":<table>,"row":{<key>:<value>,...}}` and a line feed; `keys` are the columns'
    /// names as JSON strings, `values` each cell's JSON text (nil for SQL NULL).
    package static func appendJSONLine(
        table: [UInt8], keys: [[UInt8]], values: [ByteBuffer?], to out: inout [UInt8]
    ) {
        out.append(contentsOf: jsonLineStart)
        out.append(contentsOf: table)
        out.append(contentsOf: jsonLineRow)
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: key)
            out.append(UInt8(ascii: ":"))
            if index < values.count, let value = values[index] {
                value.withUnsafeReadableBytes { out.append(contentsOf: $0) }
            } else {
                out.append(contentsOf: null)
            }
        }
        out.append(contentsOf: jsonLineEnd)
    }

    /// The values as one CSV record and CR LF; `text` tells which columns hold text answers (the
    /// formula guard's).
    package static func appendCSVLine(values: [ByteBuffer?], text: [Bool], to out: inout [UInt8]) {
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if let value {
                let isText = index < text.count && text[index]
                value.withUnsafeReadableBytes { appendCSVValue($0, text: isText, to: &out) }
            }
        }
        out.append(contentsOf: [0x0D, 0x0A])
    }

    /// A JSON value as a CSV field: strings unquoted from JSON, `null` empty. Text answers that a
    /// spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) get a
    /// leading `'`, the usual guard against formula injection; the JSON-lines export has them
    /// exactly as written. The guard reads the first byte of the UTF-8: every formula start is
    /// ASCII, and a byte below 0x80 is a whole scalar (`=` followed by a zero-width joiner, one
    /// `Character` that is not `=`, still starts with the scalar `=`).
    package static func appendCSVValue<Bytes: BidirectionalCollection<UInt8>>(
        _ json: Bytes, text: Bool, to out: inout [UInt8]
    ) {
        guard !json.elementsEqual(null) else { return }
        guard json.first == UInt8(ascii: "\""), json.count >= 2 else {
            appendCSVField(json, to: &out)
            return
        }
        // PostgreSQL escapes only quotes, backslashes and control characters: most strings are
        // their bytes between the quotes.
        if !json.contains(UInt8(ascii: "\\")) {
            appendUnquoted(json.dropFirst().dropLast(), text: text, to: &out)
        } else if case .string(let value)? = try? JSONValue.parse(Array(json), budget: .storedValue(bytes: json.count)) {
            appendUnquoted(Array(value.utf8), text: text, to: &out)
        } else {
            appendCSVField(json, to: &out)
        }
    }

    private static func appendUnquoted<Bytes: Collection<UInt8>>(_ value: Bytes, text: Bool, to out: inout [UInt8]) {
        if text, let first = value.first, CSV.isFormulaStart(first) {
            appendCSVField([UInt8(ascii: "'")] + Array(value), to: &out)
        } else {
            appendCSVField(value, to: &out)
        }
    }

    /// A field as RFC 4180 writes it (`CSV.appendField`).
    package static func appendCSVField<Bytes: Collection<UInt8>>(_ value: Bytes, to out: inout [UInt8]) {
        CSV.appendField(value, to: &out)
    }

    private static let null = Array("null".utf8)
    private static let jsonLineStart = Array(#"{"table":"#.utf8)
    private static let jsonLineRow = Array(#","row":{"#.utf8)
    private static let jsonLineEnd = Array("}}\n".utf8)
}
