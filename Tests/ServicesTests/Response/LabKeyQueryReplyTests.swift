import JSONText
import ResponseHTTP
import Testing

/// A query reply is written straight into bytes; it must read as LabKey's shapes in every format
/// version: members in key order, each row's cells by name (the later of two columns of one name),
/// boxed as `{"value": ...}` from 9.1 and under `data` from 13.2.
@Suite struct LabKeyQueryReplyTests {
    static let fields: [LabKeyQueryReply.Field] = [
        .init(name: "Key", storage: "INTEGER", isKey: true), .init(name: "note", storage: "VARCHAR"),
        .init(name: "b", storage: "DOUBLE"), .init(name: "note", storage: "VARCHAR"),
    ]
    static let rows: [[JSONValue]] = [
        [.number(1), .string("first \"quoted\"\n"), .number(2.5), .string("later wins")],
        [.number(2), .null, .null, .bool(true)],
    ]

    @Test(arguments: LabKeyQueryReply.Format.allCases)
    func theReplyReadsAsLabKeysShapeInEveryFormat(format: LabKeyQueryReply.Format) throws {
        let text = LabKeyQueryReply.rows(
            schemaName: "lists", queryName: "daily", format: format, fields: Self.fields, rows: Self.rows, rowCount: 40)
        let reply = try JSONValue.parse(text, budget: .studyDocument)
        // What the bytes say is the canonical text of what they parse to: keys in order, compact.
        #expect(reply.serialized(sortedKeys: true) == String(decoding: text, as: UTF8.self))
        guard case .object(let members) = reply, case .array(let rows)? = members["rows"] else {
            Issue.record("no rows in \(String(decoding: text, as: UTF8.self))")
            return
        }
        #expect(members["rowCount"] == .number(40))
        #expect(members["formatVersion"] == .number(format.rawValue))
        #expect(members["schemaName"] == .string("lists"))
        #expect(members["queryName"] == .string("daily"))
        if case .array(let fields)? = members["metaData"]?["fields"] { #expect(fields.count == 4) } else { Issue.record("no fields") }
        #expect(members["metaData"]?["id"] == .string("Key"))
        #expect(rows.count == 2)
        func cell(_ row: Int, _ name: String) -> JSONValue? {
            let cells = format.rawValue >= LabKeyQueryReply.Format.v13_2.rawValue ? rows[row]["data"] : rows[row]
            return format == .v8_3 ? cells?[name] : cells?[name]?["value"]
        }
        #expect(cell(0, "Key") == .number(1))
        #expect(cell(0, "note") == .string("later wins"))
        #expect(cell(0, "b") == .number(2.5))
        #expect(cell(1, "note") == .bool(true))
        #expect(cell(1, "b") == .null)
        if case .object(let cells)? = format.rawValue >= LabKeyQueryReply.Format.v13_2.rawValue ? rows[0]["data"] : rows[0] {
            #expect(cells.count == 3, "one cell a name")
        } else {
            Issue.record("a row is not an object")
        }
    }

    @Test func aReplyWithoutRowsHasAnEmptyArray() throws {
        let text = LabKeyQueryReply.rows(schemaName: "lists", queryName: "sql", format: .v8_3, fields: [], rows: [], rowCount: 0)
        let reply = try JSONValue.parse(text, budget: .studyDocument)
        #expect(reply["rows"] == .array([]))
        #expect(reply["metaData"]?["id"] == nil)
    }
}
