import Foundation
import StudyModels

/// Participant properties (docs/response-api.md, Participant properties): values the research team knows about
/// each enrollment token (pre-enrollment, returned by `validateEnrollmentToken`) or fills in
/// later, kept in the study's `ParticipantProperties` table, one column per property, which the
/// apps read with `executeSQL` like any other.
package enum ParticipantProperties {
    /// The table's name in the study's schema and in participant queries.
    package static let listName = ResponseLists.participantProperties

    /// How a property of each type is stored: numbers as double precision (integer-valued ones
    /// too, as every number in the response tables), dates with their offset, times and strings
    /// as text.
    package static func storage(_ type: ParticipantProperty.DataType) -> SurveySchema.Storage {
        switch type {
        case .boolean: .boolean
        case .date: .timestamp
        case .integer, .decimal, .number: .double
        case .string, .time: .varchar(nil)
        }
    }

    package static func schema(_ properties: [ParticipantProperty]) -> SurveySchema {
        SurveySchema(
            activityId: listName, version: "",
            lists: [.init(name: listName, parent: nil, columns: properties.map { .init(name: $0.key, storage: storage($0.dataType)) })])
    }

    /// One uploaded row: an enrollment token and text values by property id.
    package struct Row: Sendable, Equatable {
        package var token: String
        package var values: [String: String?]
        /// The CSV line the row starts on, so a refusal names the line a spreadsheet shows
        /// (nil for JSON rows, which are numbered from 1 in order).
        package var line: Int?

        package init(token: String, values: [String: String?], line: Int? = nil) {
            self.token = token
            self.values = values
            self.line = line
        }
    }

    /// A value an upload cannot use, located by row (1-based, the header not counted) and field.
    package struct Problem: Error, Sendable, Equatable {
        package var row: Int
        package var field: String
        package var message: String
    }

    /// Why a value does not fit its property.
    package struct ValueError: Error, Equatable {
        package var message: String
    }

    /// A value as typed JSON for its property.
    package static func value(_ text: String?, as type: ParticipantProperty.DataType) throws(ValueError) -> JSONValue {
        guard let raw = text?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty else { return .null }
        switch type {
        case .boolean:
            switch raw.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw ValueError(message: "expected true or false, got '\(raw)'")
            }
        case .integer:
            guard let number = Int(raw) else { throw ValueError(message: "expected a whole number, got '\(raw)'") }
            return .number(Double(number))
        case .decimal, .number:
            guard let number = Double(raw), number.isFinite else { throw ValueError(message: "expected a number, got '\(raw)'") }
            return .number(number)
        case .date:
            guard let date = parseDate(raw) else {
                throw ValueError(message: "expected a date (yyyy-MM-dd, or ISO 8601 with time and offset), got '\(raw)'")
            }
            return .string(ISO8601DateFormatter().string(from: date))
        case .string, .time:
            return .string(raw)
        }
    }

    /// `yyyy-MM-dd` (midnight UTC) or an ISO 8601 date-time with an offset.
    package static func parseDate(_ text: String) -> Date? {
        if text.count == 10 {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            return formatter.date(from: text)
        }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// Rows from CSV: a header `token,<propertyId>,...` then one line per token (RFC 4180
    /// quoting). An empty cell clears the value. A problem's `row` is the CSV line.
    package static func rows(csv: String) -> Result<[Row], Problem> {
        let records = CSV.records(csv)
        guard let header = records.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces) }),
            header.first?.lowercased() == "token"
        else { return .failure(Problem(row: 1, field: "token", message: "the first column of the header must be token")) }
        var rows: [Row] = []
        for record in records.dropFirst() where !(record.fields.count == 1 && record.fields[0].isEmpty) {
            guard record.fields.count == header.count else {
                return .failure(Problem(
                    row: record.line, field: "", message: "expected \(header.count) fields, got \(record.fields.count)"))
            }
            var values: [String: String?] = [:]
            for (name, cell) in zip(header.dropFirst(), record.fields.dropFirst()) { values[name] = cell }
            rows.append(Row(token: record.fields[0], values: values, line: record.line))
        }
        return .success(rows)
    }
}
