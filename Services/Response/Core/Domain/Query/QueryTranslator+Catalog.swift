extension QueryTranslator {
    /// A study's lists as the translator sees them.
    package struct Catalog: Sendable {
        package struct Table: Sendable {
            package var name: String
            package var sqlName: String
            /// In creation order: system columns first, then questions as designs added them.
            package var columns: [Column]
            /// The list this one's rows belong to (a child's `<Parent>Id` column holds its `Key`).
            package var parent: String? = nil

            package init(name: String, sqlName: String, columns: [Column], parent: String? = nil) {
                self.name = name
                self.sqlName = sqlName
                self.columns = columns
                self.parent = parent
            }

            package func column(_ name: String) -> Column? {
                columns.first { $0.name.lowercased() == name.lowercased() }
            }
        }

        package struct Column: Sendable {
            package var name: String
            package var sqlName: String
            /// DOUBLE, TIMESTAMP, BOOLEAN, VARCHAR, or INTEGER for system keys.
            package var storage: String
            /// A VARCHAR's length limit; nil for unlimited text and other types.
            package var maxLength: Int? = nil
            package var system: Bool = false

            package init(name: String, sqlName: String, storage: String, maxLength: Int? = nil, system: Bool = false) {
                self.name = name
                self.sqlName = sqlName
                self.storage = storage
                self.maxLength = maxLength
                self.system = system
            }

            /// The column keeping a date answer's offset (`SQLName.offsetColumn`); nil for every
            /// other column, system dates included (those are instants the service wrote).
            package var offsetSQLName: String? {
                storage == "TIMESTAMP" && !system ? SQLName.offsetColumn(for: sqlName) : nil
            }

            /// The value as JSON text for the grids and exports, read from `alias`: a date answer
            /// as ISO 8601 at the offset it was answered at (`2017-02-13T00:00:00.000-05:00`);
            /// before offsets were kept, the instant in UTC.
            package func jsonSQL(alias: String) -> String {
                let value = "\(alias).\(SQLName.quoted(sqlName))"
                guard let offset = offsetSQLName.map({ "\(alias).\(SQLName.quoted($0))" }) else {
                    return "pg_catalog.to_json(\(value))::text"
                }
                return """
                    CASE WHEN \(offset) IS NULL THEN pg_catalog.to_json(\(value))::text \
                    ELSE pg_catalog.to_json(pg_catalog.to_char(\(value) AT TIME ZONE pg_catalog.make_interval(mins => \(offset)), \
                    'YYYY-MM-DD"T"HH24:MI:SS.MS') || \(QueryTranslator.offsetText(offset, colon: true)))::text END
                    """
            }

            /// The type researchers are shown (the data grids, the exports' manifests): `key` for
            /// the system numbers, `number`, `date-time`, `boolean` or `text`.
            package var typeName: String {
                switch storage {
                case "INTEGER": "key"
                case "DOUBLE": "number"
                case "TIMESTAMP": "date-time"
                case "BOOLEAN": "boolean"
                default: "text"
                }
            }
        }

        package var schema: String
        package var tables: [String: Table]
        /// Lower-cased table names in creation order (parents before their children).
        package var order: [String] = []

        package init(schema: String, tables: [String: Table], order: [String] = []) {
            self.schema = schema
            self.tables = tables
            self.order = order
        }

        package func table(_ name: String) -> Table? { tables[name.lowercased()] }

        package var orderedTables: [Table] { order.compactMap { tables[$0] } }
    }
}
