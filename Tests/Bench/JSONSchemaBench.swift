import Foundation
import JSONSchema
import JSONText

/// `json-schema-bench SCHEMA-DIR ROOT-FILE DOCUMENT SECONDS`: compiles ROOT-FILE (with every
/// schema of SCHEMA-DIR available by its `$id`), then validates DOCUMENT over and over for
/// SECONDS, and prints one line of JSON: documents per second, and whether the document is valid.
/// `make bench` runs it beside Python's jsonschema doing the same (scripts/bench_json_schema.py).
@main
enum JSONSchemaBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let seconds = Double(arguments[4]), seconds > 0, seconds <= 600 else {
            FileHandle.standardError.write(Data("usage: json-schema-bench SCHEMA-DIR ROOT-FILE DOCUMENT SECONDS (at most 600)\n".utf8))
            exit(64)
        }
        let directory = URL(fileURLWithPath: arguments[1])
        var documents = SchemaDocuments()
        var rootID: String?
        var rootSchema: JSONValue?
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".json") {
            let value = try JSONValue.parse(Array(try Data(contentsOf: directory.appendingPathComponent(name))), budget: JSONValue.Budget(maxBytes: 1 << 26, maxNodes: 1 << 22))
            guard case .string(let id)? = value["$id"] else { continue }
            documents.add(value, at: id)
            if name == arguments[2] { (rootID, rootSchema) = (id, value) }
        }
        guard let rootID, let rootSchema else {
            FileHandle.standardError.write(Data("\(arguments[2]) is not a schema with an $id in \(arguments[1])\n".utf8))
            exit(66)
        }
        let schema = try JSONSchema(rootSchema, at: rootID, documents: documents)
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: arguments[3]))), budget: JSONValue.Budget(maxBytes: 1 << 26, maxNodes: 1 << 22))
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int64(seconds * 1000))
        var count = 0
        var valid = true
        let start = clock.now
        while clock.now < end {
            // A batch between clock readings, so that reading the clock is not what is measured.
            for _ in 0..<100 { valid = schema.isValid(document) && valid }
            count += 100
        }
        let elapsed = start.duration(to: clock.now)
        let perSecond = Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        let problems = schema.violations(of: document).count
        print("{\"documentsPerSecond\": \(Int(perSecond)), \"valid\": \(valid), \"problems\": \(problems)}")
    }
}
