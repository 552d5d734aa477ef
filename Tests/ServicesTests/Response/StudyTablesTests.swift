import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import StudyModels
import Testing
import TestSupport

/// Survey designs become real tables in the study's schema, and later designs only add or widen
/// with the original's test data's DynamicSchema sequence.
@Suite(.needsCluster) struct StudyTablesTests {
    static let study = "DYNAMICSCHEMASTUDY"

    func tables(_ h: ResponseHarness) -> StudyTables { StudyTables(client: h.postgres, access: h.access, logger: Logger(label: "test")) }

    func apply(_ h: ResponseHarness, _ design: String) async throws {
        try await tables(h).apply(try LabKeyDesigns.derive(design), studyKey: Self.study)
    }

    /// `table → column → data type` of the study's schema, from the catalog.
    func catalog(_ h: ResponseHarness) async throws -> [String: [String: String]] {
        let rows = try await h.postgres.query(
            """
            SELECT table_name::text, column_name::text,
                   data_type::text || coalesce('(' || character_maximum_length::text || ')', '')
            FROM information_schema.columns WHERE table_schema = \(SQLName.schema(forStudy: Self.study))
            """, logger: Logger(label: "test"))
        var found: [String: [String: String]] = [:]
        for try await (table, column, type) in rows.decode((String, String, String).self) { found[table, default: [:]][column] = type }
        return found
    }

    /// Two questions whose keys differ only in Unicode normalisation are two columns, and a
    /// response answering both stores both answers; an answer under a key no column has by its
    /// scalars is refused by name, never written into the other's column.
    @Test func keysThatDifferOnlyInNormalisationAreTwoColumns() async throws {
        let composed = "\u{e9}t\u{e9}", decomposed = "e\u{301}te\u{301}"
        @Sendable func design(_ keys: [String]) throws -> SurveySchema {
            let steps = keys.map { #"{"type": "question", "resultType": "text", "key": "\#($0)"}"# }.joined(separator: ",")
            return try SurveySchema.derive(fromDesign: Data(
                #"{"activity": {"metadata": {"activityId": "Seasons", "version": "1"}, "steps": [\#(steps)]}}"#.utf8))
        }
        @Sendable func answers(_ keys: [String]) throws -> JSONValue {
            let results = keys.enumerated().map { #"{"resultType": "text", "key": "\#($1)", "value": "answer \#($0)"}"# }
            return try JSONValue.parse(Array(#"{"results": [\#(results.joined(separator: ","))]}"#.utf8), budget: .responseAnswers)
        }
        try await ResponseHarness.run { h in
            try await h.studyEvent(Self.study)
            try await tables(h).apply(try design([composed]), studyKey: Self.study)
            var lists = try await h.postgres.withConnection { try await tables(h).lists(studyKey: Self.study, on: $0).lists }
            #expect(throws: ResponseShredder.Failure.self, "only the composed column exists") {
                try ResponseShredder(lists: lists, container: Self.study).plan(activityId: "Seasons", data: try answers([decomposed]))
            }
            try await tables(h).apply(try design([composed, decomposed]), studyKey: Self.study)
            var columns: [String] = []
            for try await name in try await h.postgres.query(
                """
                SELECT column_name::text FROM information_schema.columns
                WHERE table_schema = \(SQLName.schema(forStudy: Self.study)) AND table_name = 'Seasons'
                  AND column_name::text NOT IN ('Key', 'ParticipantId', 'Created')
                """, logger: Logger(label: "test")
            ).decode(String.self) { columns.append(name) }
            #expect(columns.count == 2, "\(columns)")
            lists = try await h.postgres.withConnection { try await tables(h).lists(studyKey: Self.study, on: $0).lists }
            let row = try ResponseShredder(lists: lists, container: Self.study).plan(
                activityId: "Seasons", data: try answers([composed, decomposed]))
            try #require(row.values.count == 2)
            #expect(row.values.map(\.column.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                .elementsEqual([decomposed, composed]) { $0.utf8.elementsEqual($1.utf8) })
            #expect(Set(row.values.map { Array($0.column.sqlName.utf8) }).count == 2)
        }
    }

    @Test func aDesignBecomesTablesWithTheOriginalsTypes() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent(Self.study)
            try await apply(h, "DYNAMICSCHEMASTUDY_NewSurvey_1.json")
            let found = try await catalog(h)
            #expect(Set(found.keys) == Set(try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_NewSurvey_1.json").lists.map(\.name)))
            let top = try #require(found["NewSurvey"])
            #expect(top["Key"] == "bigint")
            #expect(top["ParticipantId"] == "bigint")
            #expect(top["Created"] == "timestamp with time zone")
            #expect(top["ScaleField"] == "double precision")
            #expect(top["IntegerField"] == "double precision")
            #expect(top["DateTimeField"] == "timestamp with time zone")
            #expect(top["BooleanField"] == "boolean")
            #expect(top["ShortTextField"] == "character varying(250)")
            #expect(top["MaxTextField"] == "text")
            #expect(top["NewSurveyId"] == nil)  // the top list has no parent column
            #expect(found["NewSurveyGroupedList"]?["NewSurveyId"] == "bigint")
            #expect(found["NewSurveyGroupedListSubGroupedList"]?["NewSurveyGroupedListId"] == "bigint")
            #expect(found["NewSurveyTextChoiceField"]?["TextChoiceField"] == "text")
            // Applying the same design again changes nothing.
            try await apply(h, "DYNAMICSCHEMASTUDY_NewSurvey_1.json")
            #expect(try await catalog(h) == found)
        }
    }

    @Test func laterDesignsOnlyAddOrWiden() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent(Self.study)
            for version in [1, 2, 3, 4, 5, 6, 7, 8, 9, 13] {
                try await apply(h, "DYNAMICSCHEMASTUDY_NewSurvey_\(version).json")
            }
            let found = try await catalog(h)
            #expect(found["NewSurvey"]?["DoubleField2"] == "double precision")  // added by version 2
            #expect(found["NewSurvey"]?["IntegerField"] == "double precision")  // dropped by version 3, kept
            #expect(found["NewSurveyGroupedList"]?["BooleanField2"] == "boolean")
            #expect(found["NewSurveyGroupedListSubGroupedList"]?["ContinuousScaleField2"] == "double precision")
            #expect(found["NewSurveyNewTextChoiceField"]?["NewTextChoiceField"] == "text")
            #expect(found["NewSurveyGroupedListAdded"]?["NewSurveyId"] == "bigint")  // a new form in version 13
            // Version 10 names another top list; it lives beside the first.
            try await apply(h, "DYNAMICSCHEMASTUDY_NewSurvey_10.json")
            #expect(try await catalog(h)["NewSurvey_Mismatch"] != nil)
        }
    }

    /// A one-list design with these steps.
    static func design(_ steps: String, id: String = "Sleep") -> SurveySchema {
        try! SurveySchema.derive(fromDesign: Data(
            #"{"activity": {"metadata": {"activityId": "\#(id)", "version": "1"}, "steps": \#(steps)}}"#.utf8))
    }

    @Test func aChangedTypeIsRefusedAndChangesNothing() async throws {
        let design = { @Sendable (steps: String) in Self.design(steps) }
        try await ResponseHarness.run { h in
            try await h.studyEvent(Self.study)
            let store = tables(h)
            try await store.apply(
                design(#"[{"type": "question", "resultType": "scale", "key": "Hours"}, {"type": "question", "resultType": "text", "key": "Note", "format": {"maxLength": 100}}]"#),
                studyKey: Self.study)
            let before = try await catalog(h)
            // A new column and a changed type in one design: refused whole.
            await #expect(throws: StudyTables.changedType("hours")) {
                try await store.apply(
                    design(#"[{"type": "question", "resultType": "boolean", "key": "Extra"}, {"type": "question", "resultType": "boolean", "key": "hours"}]"#),
                    studyKey: Self.study)
            }
            #expect(try await catalog(h) == before)
            // A question cannot take a system column's name.
            await #expect(throws: StudyTables.changedType("Created")) {
                try await store.apply(
                    design(#"[{"type": "question", "resultType": "date", "key": "Created", "format": {"style": "Date"}}]"#),
                    studyKey: Self.study)
            }
            // Text widens (longer, then unlimited) and never narrows; names match in any case.
            try await store.apply(
                design(#"[{"type": "question", "resultType": "text", "key": "note", "format": {"maxLength": 500}}]"#),
                studyKey: Self.study)
            #expect(try await catalog(h)["Sleep"]?["Note"] == "character varying(500)")
            try await store.apply(
                design(#"[{"type": "question", "resultType": "text", "key": "Note", "format": {"maxLength": 20}}]"#),
                studyKey: Self.study)
            #expect(try await catalog(h)["Sleep"]?["Note"] == "character varying(500)")
            try await store.apply(
                design(#"[{"type": "question", "resultType": "text", "key": "Note"}]"#), studyKey: Self.study)
            #expect(try await catalog(h)["Sleep"]?["Note"] == "text")
            // A name PostgreSQL would truncate gets a hashed, distinct identifier; quotes are harmless.
            let long = String(repeating: "VeryLongQuestionKey", count: 5)
            try await store.apply(
                design(#"[{"type": "question", "resultType": "scale", "key": "\#(long)A"}, {"type": "question", "resultType": "scale", "key": "\#(long)B"}, {"type": "question", "resultType": "text", "key": "say \"hi\"; DROP TABLE x"}]"#),
                studyKey: Self.study)
            let columns = try #require(try await catalog(h)["Sleep"])
            #expect(columns.keys.filter { $0.hasPrefix("VeryLongQuestionKey") }.count == 2)
            #expect(columns.keys.allSatisfy { $0.utf8.count <= 63 })
            #expect(columns["say \"hi\"; DROP TABLE x"] == "text")
        }
    }
}
