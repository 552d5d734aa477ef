/// RFC 4180 CSV reading: quoted fields may hold commas, quotes (doubled) and line breaks; a byte
/// order mark at the start is skipped; lines may end in CRLF or LF. With a tab for the separator it
/// reads the TSV files LabKey writes, which quote by the same rules (a field holding a tab, a line
/// break or a quote, or starting or ending in white space, is quoted, its quotes doubled).
public enum CSV {
    /// A field as RFC 4180 writes it: quoted, inner quotes doubled, when it holds a comma, a quote
    /// or a line break.
    public static func appendField<Bytes: Collection<UInt8>>(_ value: Bytes, to out: inout [UInt8]) {
        guard value.contains(where: isFieldBreak) else {
            out.append(contentsOf: value)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in value {
            out.append(byte)
            if byte == UInt8(ascii: "\"") { out.append(byte) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// One line of text fields, each as `appendField` writes it, ended by CRLF. A field that a
    /// spreadsheet would run as a formula gets a leading `'` (the usual guard against formula
    /// injection): the test reads the first byte of the UTF-8, as every formula start is ASCII.
    public static func line(_ fields: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if let first = field.utf8.first, isFormulaStart(first) {
                appendField([UInt8(ascii: "'")] + Array(field.utf8), to: &out)
            } else {
                appendField(field.utf8, to: &out)
            }
        }
        out.append(contentsOf: [0x0D, 0x0A])
        return out
    }

    /// A first byte that makes a spreadsheet read a cell as a formula. (Tests of every byte of
    /// every value: a switch, not a `Set`, which hashes each.)
    public static func isFormulaStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D: true
        default: false
        }
    }

    static func isFieldBreak(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "\""), 0x0A, 0x0D: true
        default: false
        }
    }

    /// One record, with the line it starts on (1-based), so a refusal can name the line a
    /// spreadsheet shows.
    public struct Record: Sendable, Equatable {
        public var line: Int
        public var fields: [String]

        public init(line: Int, fields: [String]) {
            self.line = line
            self.fields = fields
        }
    }

    public static func parse(_ text: String, separator: Unicode.Scalar = ",") -> [[String]] {
        records(text, separator: separator).map(\.fields)
    }

    public static func records(_ text: String, separator: Unicode.Scalar = ",") -> [Record] {
        var records: [Record] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var recordLine = 1
        var characters = Array(text.unicodeScalars)[...]
        if characters.first == "\u{FEFF}" { characters = characters.dropFirst() }
        var index = characters.startIndex
        while index < characters.endIndex {
            let character = characters[index]
            if quoted {
                if character == "\"" {
                    if index + 1 < characters.endIndex && characters[index + 1] == "\"" {
                        field.unicodeScalars.append("\"")
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if character == "\n" { line += 1 }
                    field.unicodeScalars.append(character)
                }
            } else if character == "\"" && field.isEmpty {
                quoted = true
            } else if character == separator {
                record.append(field)
                field = ""
            } else if character == "\n" || character == "\r" {
                if character == "\r" && index + 1 < characters.endIndex && characters[index + 1] == "\n" { index += 1 }
                record.append(field)
                records.append(Record(line: recordLine, fields: record))
                record = []
                field = ""
                line += 1
                recordLine = line
            } else {
                field.unicodeScalars.append(character)
            }
            index += 1
        }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(Record(line: recordLine, fields: record))
        }
        return records
    }
}
