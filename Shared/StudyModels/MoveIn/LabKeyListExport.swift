import Foundation
import JSONText

/// What a LabKey-era MyStudies response server kept of a study's responses, as its administrators
/// export it: the folder's lists (LabKey's list archive, `<list>.tsv` each, one list per activity
/// and one per form, choice question and active task below it, every row carrying the integer
/// `ParticipantId` of the server's `mobileappstudy.Participant` table), that table exported as a
/// grid (it maps the integer to the app token the apps hold), and the `ResponseMetadata` table
/// exported as a grid (each answer's start, end, skip and when it was stored: the lists keep no
/// times). docs/moving-in.md says how to export each.
public struct LabKeyListExport: Sendable, Equatable {
    /// One exported table: its columns as the header names them and its rows as text.
    public struct Table: Sendable, Equatable {
        public var name: String
        public var columns: [String]
        public var rows: [[String]]

        public init(name: String, columns: [String], rows: [[String]]) {
            self.name = name
            self.columns = columns
            self.rows = rows
        }

        /// A table from the TSV LabKey writes (tab-separated, its quoting rules, a header of column
        /// names; a grid export may name columns by caption, `Row Id`). A row with more fields than
        /// the header is refused; a shorter one is read with the rest empty.
        public init(name: String, tsv: String) throws(Problem) {
            var records = CSV.records(tsv, separator: "\t")
            // The writer ends every row with a line break; a blank line is no row.
            records.removeAll { $0.fields == [""] }
            guard let header = records.first else { throw Problem(description: "\(name) is empty: it has no header") }
            var rows: [[String]] = []
            for record in records.dropFirst() {
                guard record.fields.count <= header.fields.count else {
                    throw Problem(description: "\(name), line \(record.line): \(record.fields.count) fields under \(header.fields.count) columns")
                }
                rows.append(record.fields + Array(repeating: "", count: header.fields.count - record.fields.count))
            }
            self.init(name: name, columns: header.fields, rows: rows)
        }

        /// The column named `name` in any case, with or without the spaces and underscores a caption
        /// puts in (`RowId`, `Row Id`), the first if several are.
        public func column(_ name: String) -> Int? {
            let exact = ScalarKey(name.lowercased())
            if let index = columns.firstIndex(where: { ScalarKey($0.lowercased()) == exact }) { return index }
            let wanted = Self.fold(name)
            return columns.firstIndex { Self.fold($0) == wanted }
        }

        static func fold(_ name: String) -> ScalarKey {
            ScalarKey(String(String.UnicodeScalarView(name.lowercased().unicodeScalars.filter { $0 != " " && $0 != "_" })))
        }
    }

    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The lists of the study's folder.
    public var lists: [Table]
    /// `mobileappstudy.Participant`: `RowId` and `AppToken` at least.
    public var participants: Table
    /// `mobileappstudy.ResponseMetadata`: `ListName`, `ActivityId` (the key of the response's row in
    /// its activity's list), `FieldName`, `StartTime`, `EndTime`, `Skipped`, `Created`.
    public var responseMetadata: Table

    public init(lists: [Table], participants: Table, responseMetadata: Table) {
        self.lists = lists
        self.participants = participants
        self.responseMetadata = responseMetadata
    }

    /// The names of the columns each grid export must hold.
    public static let participantColumns = ["RowId", "AppToken"]
    public static let responseMetadataColumns = ["ListName", "ActivityId", "FieldName", "StartTime", "EndTime", "Skipped", "Created"]

    /// The first required column a table lacks.
    public static func missingColumn(_ table: Table, of required: [String]) -> String? {
        required.first { table.column($0) == nil }
    }
}

/// The times a LabKey server writes and exports: zone-less local times of the server's zone, as
/// Java's `Timestamp` prints them (`2017-02-13 15:15:00.0`) in a list archive, and as a grid export
/// formats them (`2017-02-13 15:15`, or a date alone).
struct LabKeyTimes {
    let zone: TimeZone

    func instant(_ text: String) -> Date? {
        switch text.unicodeScalars.count {
        case 10: DatabaseTimes(zone: zone).instant(text + " 00:00:00")
        case 16: DatabaseTimes(zone: zone).instant(text + ":00")
        default: DatabaseTimes(zone: zone).instant(text)
        }
    }

    /// The instant as the apps write one (`2017-02-13T15:15:00.000-0500`), in the server's zone.
    func wire(_ date: Date) -> String {
        let offset = zone.secondsFromGMT(for: date)
        let local = date.timeIntervalSince1970 + Double(offset)
        // Only instants read from four-digit years come here: no overflow.
        let milliseconds = (local * 1000).rounded(.down)
        let days = Int((milliseconds / 86_400_000).rounded(.down))
        let inDay = Int(milliseconds - Double(days) * 86_400_000)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return GregorianDays.dateText(days) + "T" + WireInstants.clock(inDay / 1000)
            + String(format: ".%03d%@%02d%02d", inDay % 1000, sign, minutes / 60, minutes % 60)
    }
}
