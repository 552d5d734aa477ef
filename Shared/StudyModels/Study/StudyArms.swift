/// The arms (conditions) of a study whose participants are assigned one by the server, and how
/// they are assigned (docs/schema-protocols.md, Conditions).
public struct StudyArms: Codable, Sendable, Equatable {
    /// The arms' names, in the order the study lists them.
    public var names: [String]
    public var assignment: SchemaConditions.Method

    public init(names: [String], assignment: SchemaConditions.Method = .block) {
        self.names = names
        self.assignment = assignment
    }

    enum CodingKeys: String, CodingKey { case names, assignment }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        names = try c.decode([String].self, forKey: .names)
        assignment = try c.decodeIfPresent(SchemaConditions.Method.self, forKey: .assignment) ?? .block
    }
}

/// The document a study was imported from, kept because its own app reads it: a schema study's
/// protocol is what the schema app downloads. The study's activities, schedules and arms are made
/// from it at import (`SchemaImport`), and change only with the next import.
public struct StudySource: Codable, Sendable, Equatable {
    public enum Format: String, Codable, Sendable {
        /// A schema app protocol (https://getschema.app).
        case schema
    }

    /// The list a schema study's page events are kept in, beside its activities' lists; no
    /// activity of such a study may take its name.
    public static let schemaLogList = "SchemaLog"

    public var format: Format
    /// The document as imported, in the form its app of today reads (`SchemaProtocolCheck.normalized`).
    public var document: JSONValue

    public init(format: Format, document: JSONValue) {
        self.format = format
        self.document = document
    }
}
