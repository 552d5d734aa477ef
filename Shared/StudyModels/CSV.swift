/// RFC 4180 CSV reading: quoted fields may hold commas, quotes (doubled) and line breaks; a byte
/// order mark at the start is skipped; lines may end in CRLF or LF. With a tab for the separator it
/// reads the TSV files LabKey writes, which quote by the same rules (a field holding a tab, a line
/// break or a quote, or starting or ending in white space, is quoted, its quotes doubled).
public enum CSV {
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
