import Foundation
import ResponseCore
import ResponseHTTP
import ResponseService
import StudyModels
import Testing
import TestSupport

/// Survey designs → lists, for every design in the conformance data.
@Suite struct SurveySchemaTests {
    @Test func everyConformanceDesignDerivesOrFailsWithTheOriginalsMessage() throws {
        var derived = 0
        for url in Conformance.labKeySurveyDesigns {
            let name = url.lastPathComponent
            let data = try Data(contentsOf: url)
            switch name {
            case Conformance.malformedDesign:
                #expect(throws: SurveySchema.DesignError.unparsable) { try SurveySchema.derive(fromDesign: data) }
            case "DYNAMICSCHEMASTUDY_empty_1.0.json":
                #expect(throws: SurveySchema.DesignError.incomplete) { try SurveySchema.derive(fromDesign: data) }
            default:
                let schema = try SurveySchema.derive(fromDesign: data)
                #expect(!schema.lists.isEmpty, "\(name)")
                #expect(schema.lists.first?.parent == nil)
                derived += 1
            }
        }
        #expect(derived >= 25)
    }

    @Test func newSurveyGivesTheOriginalsListsAndTypes() throws {
        let schema = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_NewSurvey_1.json")
        #expect(schema.activityId == "NewSurvey")
        #expect(schema.version == "1")
        let names = schema.lists.map(\.name)
        #expect(names.prefix(3) == ["NewSurvey", "NewSurveyTextChoiceField", "NewSurveyGroupedList"])
        #expect(names.contains("NewSurveyGroupedListSubGroupedList"))
        #expect(names.contains("NewSurveyGroupedListTextChoiceField"))
        let top = try #require(schema.lists.first)
        let columns = Dictionary(uniqueKeysWithValues: top.columns.map { ($0.name, $0.storage) })
        #expect(columns["ScaleField"] == .double)
        #expect(columns["ContinusousScaleField"] == .double)
        #expect(columns["IntegerField"] == .double)  // Integer style is stored as a double
        #expect(columns["DoubleField"] == .double)
        #expect(columns["DateTimeField"] == .timestamp)
        #expect(columns["DateField"] == .timestamp)
        #expect(columns["BooleanField"] == .boolean)
        #expect(columns["MaxTextField"] == .varchar(nil))  // maxLength 0: unlimited
        #expect(columns["ShortTextField"] == .varchar(250))
        #expect(columns["TimeIntervalField"] == .double)
        #expect(columns["HeightField"] == .double)
        #expect(columns["LocationField"] == .varchar(nil))
        #expect(columns["TextChoiceField"] == nil)  // a child list instead
        #expect(columns.count == 17)
        let choice = try #require(schema.lists.first { $0.name == "NewSurveyTextChoiceField" })
        #expect(choice.parent == "NewSurvey")
        #expect(choice.columns == [.init(name: "TextChoiceField", storage: .varchar(nil))])
        #expect(schema.lists.first { $0.name == "NewSurveyGroupedList" }?.parent == "NewSurvey")
        #expect(schema.lists.first { $0.name == "NewSurveyGroupedListSubGroupedList" }?.parent == "NewSurveyGroupedList")
    }

    @Test func activeTasksAndOtherOptionsGetTheirChildLists() throws {
        let kicks = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_FKC-74_1.0.json")
        #expect(kicks.lists.count == 2)
        #expect(kicks.lists[1].columns.map(\.name) == ["duration", "count"])
        #expect(kicks.lists[1].name.hasPrefix("FKC-74"))
        let hanoi = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_TOH-75_1.0.json")
        #expect(hanoi.lists[1].columns == [.init(name: "puzzleWasSolved", storage: .boolean), .init(name: "numberOfMoves", storage: .double)])
        let memory = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_SSM-76_1.0.json")
        #expect(memory.lists[1].columns.map(\.name) == ["score", "numberOfGames", "numberOfFailures"])
        // An "other" option that asks for text adds <key>_Other_Text.
        let other = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_OtherOption_1.json")
        let withText = other.lists.filter { list in list.columns.contains { $0.name.hasSuffix("_Other_Text") } }
        #expect(!withText.isEmpty)
        #expect(withText.allSatisfy { list in list.columns.last?.storage == .varchar(4000) })
        // The update adds the text column where version 1 had none.
        let before = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_OtherOptionUpdate_1.json")
        let after = try LabKeyDesigns.derive("DYNAMICSCHEMASTUDY_OtherOptionUpdate_2.json")
        #expect(before.lists.allSatisfy { list in !list.columns.contains { $0.name.hasSuffix("_Other_Text") } })
        #expect(after.lists.contains { list in list.columns.contains { $0.name.hasSuffix("_Other_Text") } })
        // Empty steps: a top list with no question columns.
        #expect(try LabKeyDesigns.derive("FORWARDINGSUCCESS_FakeForwardingSurvey_1.json").lists.map(\.columns) == [[]])
    }

    @Test func badDesignsFailWithTheOriginalsWords() throws {
        func design(_ steps: String) -> Data {
            Data(#"{"activity": {"metadata": {"activityId": "S", "version": "1"}, "steps": \#(steps)}}"#.utf8)
        }
        let cases: [(String, SurveySchema.DesignError)] = [
            (#"[{"type": "question", "resultType": "scale", "key": "a"}, {"type": "question", "resultType": "text", "key": "A"}]"#,
             .duplicate("A")),
            (#"[{"type": "question", "resultType": "numeric", "key": "n"}]"#,
             .cannotApply("the number question 'n' has no style (Integer or Decimal)", step: "n")),
            (#"[{"type": "question", "resultType": "date", "key": "d", "format": {"style": "Week"}}]"#,
             .cannotApply("the date question 'd' has no kind (Date, or Date and time)", step: "d")),
            (#"[{"type": "question", "resultType": "date", "key": "d"}]"#,
             .cannotApply("the date question 'd' has no kind (Date, or Date and time)", step: "d")),
            (#"[{"resultType": "scale", "key": "untyped"}]"#, .cannotApply("step 'untyped' has no type", step: "untyped")),
            (#"[{"type": "form", "resultType": "grouped", "key": "g"}]"#, .emptyForm("g")),
            (#"[{"type": "question", "resultType": "hologram", "key": "h"}]"#, .unknownType("h")),
            (#"[{"type": "question", "resultType": "textChoice", "key": "c", "format": {"selectionStyle": "single"}}]"#,
             .unparsable),
        ]
        for (steps, error) in cases {
            #expect(throws: error) { try SurveySchema.derive(fromDesign: design(steps)) }
        }
        #expect(throws: SurveySchema.DesignError.incomplete) {
            try SurveySchema.derive(fromDesign: Data(#"{"activity": {"metadata": {"activityId": "S"}}}"#.utf8))
        }
        // Instruction steps are skipped, whatever they hold.
        let skipped = try SurveySchema.derive(fromDesign: design(#"[{"type": "Instruction", "key": "i"}]"#))
        #expect(skipped.lists == [.init(name: "S", parent: nil, columns: [])])
    }
}
