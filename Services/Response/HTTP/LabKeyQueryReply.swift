import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The shapes of LabKey's query replies (`getQuery`, `selectRows`, `executeSql`) by the format
/// version a client asks for with `apiVersion`: 8.3 (the default) has plain values; 9.1 wraps each
/// in `{"value": ...}`; 13.2 and 17.1 (the "reporting" formats) also put each row's cells under
/// `data`. Every format carries `metaData.fields` (each column's name and type) and `rowCount`.
package enum LabKeyQueryReply {
    package enum Format: Double, Sendable, CaseIterable {
        case v8_3 = 8.3
        case v9_1 = 9.1
        case v13_2 = 13.2
        case v17_1 = 17.1

        /// The newest format no newer than the version asked for (LabKey answers a version between
        /// two formats in the older one); 8.3 when none is asked for.
        package init(apiVersion text: String?) throws(APIError) {
            guard let text, !text.isEmpty else {
                self = .v8_3
                return
            }
            guard let version = Double(text), version.isFinite, version >= 0 else {
                throw APIError(.badRequest, code: "invalid_request", message: "apiVersion must be a number such as 8.3, 9.1, 13.2 or 17.1, got '\(text)'.", field: "apiVersion")
            }
            self = Format.allCases.last { $0.rawValue <= version + 0.0001 } ?? .v8_3
        }
    }

    /// A column as the reply describes it.
    package struct Field: Sendable {
        package var name: String
        /// `QueryTranslator.Catalog.Column.storage`.
        package var storage: String
        package var isKey = false

        package init(name: String, storage: String, isKey: Bool = false) {
            self.name = name
            self.storage = storage
            self.isKey = isKey
        }

        /// LabKey's JSON type names.
        package var jsonType: String {
            switch storage {
            case "INTEGER": "int"
            case "DOUBLE": "float"
            case "TIMESTAMP": "date"
            case "BOOLEAN": "boolean"
            default: "string"
            }
        }

        /// The SQL type LabKey reports.
        package var sqlType: String {
            switch storage {
            case "INTEGER": "BIGINT"
            case "DOUBLE": "DOUBLE"
            case "TIMESTAMP": "TIMESTAMP"
            case "BOOLEAN": "BOOLEAN"
            default: "VARCHAR"
            }
        }

        /// A column's description in `metaData.fields` and `getQueryDetails`.
        package var json: JSONValue {
            .object([
                "name": .string(name), "fieldKey": .string(name), "fieldKeyPath": .string(name), "caption": .string(name),
                "type": .string(jsonType), "jsonType": .string(jsonType), "sqlType": .string(sqlType),
                "isKeyField": .bool(isKey), "isNullable": .bool(!isKey), "isReadOnly": .bool(true), "isHidden": .bool(false),
                "isUserEditable": .bool(false),
            ])
        }
    }

    /// A query reply's JSON text: `rows` in `format`, described by `fields`, members in key order.
    ///
    /// Written straight into bytes: a reply of tens of thousands of rows built as `JSONValue`s (a
    /// dictionary a row, sorted again for each) cost more than PostgreSQL's reading of them. A
    /// name that two columns share holds the later column's value, as one object can hold one.
    package static func rows(
        schemaName: String, queryName: String, format: Format, fields: [Field], rows: [[JSONValue]], rowCount: Int
    ) -> [UInt8] {
        var metaData: JSONObject = [
            "root": .string("rows"), "totalProperty": .string("rowCount"), "fields": .array(fields.map(\.json)),
        ]
        if let key = fields.first(where: \.isKey) { metaData["id"] = .string(key.name) }
        let columnModel: [JSONValue] = fields.map { field in
            .object([
                "dataIndex": .string(field.name), "header": .string(field.name), "sortable": .bool(true),
                "hidden": .bool(false), "editable": .bool(false), "required": .bool(false),
                "align": .string(["int", "float"].contains(field.jsonType) ? "right" : "left"),
            ])
        }
        let members: JSONObject = [
            "schemaName": .string(schemaName), "queryName": .string(queryName), "formatVersion": .number(format.rawValue),
            "metaData": .object(metaData), "columnModel": .array(columnModel), "rowCount": .number(Double(rowCount)),
        ]
        // Each row's cells in name order: the name's JSON text and "the value" or {"value": ...}.
        var lastColumn: [String: Int] = [:]
        for (index, field) in fields.enumerated() { lastColumn[field.name] = index }
        let cells: [(name: [UInt8], column: Int)] = lastColumn.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { name, column in
                var text: [UInt8] = []
                JSONValue.writeString(name, to: &text)
                text.append(UInt8(ascii: ":"))
                if format != .v8_3 { text.append(contentsOf: #"{"value":"#.utf8) }
                return (text, column)
            }
        let wrapped = format.rawValue >= Format.v13_2.rawValue

        var out: [UInt8] = []
        out.reserveCapacity(1024 + rows.count * (16 + 24 * cells.count))
        out.append(UInt8(ascii: "{"))
        let names = (Array(members.keys) + ["rows"]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, name) in names.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            guard let value = members[name] else {
                writeRows(rows, cells: cells, wrapped: wrapped, boxed: format != .v8_3, to: &out)
                continue
            }
            value.write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func writeRows(
        _ rows: [[JSONValue]], cells: [(name: [UInt8], column: Int)], wrapped: Bool, boxed: Bool, to out: inout [UInt8]
    ) {
        out.append(UInt8(ascii: "["))
        for (index, values) in rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: wrapped ? #"{"data":{"#.utf8 : "{".utf8)
            var first = true
            for cell in cells where cell.column < values.count {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(contentsOf: cell.name)
                values[cell.column].write(to: &out)
                if boxed { out.append(UInt8(ascii: "}")) }
            }
            out.append(contentsOf: wrapped ? "}}".utf8 : "}".utf8)
        }
        out.append(UInt8(ascii: "]"))
    }
}
