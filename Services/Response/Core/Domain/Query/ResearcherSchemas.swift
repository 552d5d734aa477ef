/// The schemas a researcher's LabKey calls see, by LabKey's names: `lists` (the study's tables,
/// activity tables and their child tables) and `mobileappstudy` (the service's own records of the
/// study, through the views migration 12 makes). Both are read in the sandbox with the study's
/// scope (`SandboxedQueries.Scope.study`).
package enum ResearcherSchemas {
    package static let lists = "lists"
    package static let mobileAppStudy = "mobileappstudy"

    /// Every schema name, in the order `getSchemas` lists them.
    package static let names = [lists, mobileAppStudy]

    /// What each schema holds, for `getSchemas`.
    package static let descriptions = [
        lists: "The study's response tables: one per activity, and a child table per repeated answer.",
        mobileAppStudy: "The study's participants, responses with their processing status, enrollment tokens, and each answer's timing.",
    ]

    /// The translator's schemas for a study: its lists (an empty catalog before its first design)
    /// and the `mobileappstudy` views.
    package static func catalogs(lists catalog: QueryTranslator.Catalog?) -> [String: QueryTranslator.Catalog] {
        [lists: catalog ?? .init(schema: "", tables: [:]), mobileAppStudy: views]
    }

    private static func column(_ name: String, _ storage: String) -> QueryTranslator.Catalog.Column {
        // `system`: none of them is an answer (no offset column beside their dates).
        .init(name: name, sqlName: name, storage: storage, system: true)
    }

    private static func table(_ name: String, _ columns: [(String, String)]) -> QueryTranslator.Catalog.Table {
        .init(name: name, sqlName: name, columns: columns.map(column))
    }

    /// The views of migration 12, column for column.
    package static let views: QueryTranslator.Catalog = {
        let tables = [
            table(
                "Participant",
                [
                    ("ParticipantId", "INTEGER"), ("Status", "VARCHAR"), ("AllowDataSharing", "VARCHAR"),
                    ("Language", "VARCHAR"), ("Enrolled", "TIMESTAMP"), ("Withdrawn", "TIMESTAMP"),
                    ("AppTokenSHA256", "VARCHAR"), ("ExternalId", "VARCHAR"), ("Arm", "VARCHAR"), ("ArmOrdinal", "INTEGER"),
                ]),
            table(
                "Response",
                [
                    ("RowId", "INTEGER"), ("ParticipantId", "INTEGER"), ("ActivityId", "VARCHAR"),
                    ("ActivityVersion", "VARCHAR"), ("RunId", "VARCHAR"), ("Language", "VARCHAR"), ("Status", "VARCHAR"),
                    ("ErrorMessage", "VARCHAR"), ("Attempts", "INTEGER"), ("Received", "TIMESTAMP"),
                    ("Processed", "TIMESTAMP"), ("Response", "VARCHAR"),
                ]),
            table(
                "EnrollmentTokenBatch",
                [("RowId", "VARCHAR"), ("Kind", "VARCHAR"), ("Count", "INTEGER"), ("CreatedBy", "VARCHAR"), ("Created", "TIMESTAMP")]),
            table(
                "EnrollmentToken",
                [
                    ("BatchId", "VARCHAR"), ("Position", "INTEGER"), ("Kind", "VARCHAR"), ("ParticipantId", "INTEGER"),
                    ("Used", "TIMESTAMP"), ("Expires", "TIMESTAMP"), ("Revoked", "TIMESTAMP"), ("Created", "TIMESTAMP"),
                ]),
            table(
                "ResponseMetadata",
                [
                    ("RowId", "INTEGER"), ("ResponseId", "INTEGER"), ("ParticipantId", "INTEGER"), ("ActivityId", "VARCHAR"),
                    ("ListName", "VARCHAR"), ("ListKey", "INTEGER"), ("FieldName", "VARCHAR"), ("StartTime", "TIMESTAMP"),
                    ("EndTime", "TIMESTAMP"), ("Skipped", "BOOLEAN"),
                ]),
        ]
        return .init(
            schema: mobileAppStudy, tables: Dictionary(uniqueKeysWithValues: tables.map { ($0.name.lowercased(), $0) }),
            order: tables.map { $0.name.lowercased() })
    }()

    /// Each view's key column, for LabKey's `metaData.id` and `isKeyField`.
    package static func keyColumn(schema: String, table: QueryTranslator.Catalog.Table) -> String? {
        if schema.lowercased() == lists { return "Key" }
        switch table.name {
        case "Participant": return "ParticipantId"
        case "EnrollmentToken": return nil
        default: return "RowId"
        }
    }
}
