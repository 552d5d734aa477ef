import Foundation
import StudyModels
import Testing
import TestSupport

/// Designs written for the original servers import unchanged and are served back the same.
@Suite struct ActivityImportTests {
    static let designs = Conformance.labKeySurveyDesigns

    @Test func theConformanceDesignsArePresent() {
        #expect(Self.designs.count == 33)
        #expect(Self.designs.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
    }

    @Test(arguments: designs.map(\.lastPathComponent))
    func importsAndServesBackTheSameSteps(_ name: String) throws {
        let url = try #require(Self.designs.first { $0.lastPathComponent == name })
        let data = try Data(contentsOf: url)
        if name == Conformance.malformedDesign {
            let error = #expect(throws: ActivityImport.ParseError.self) { try ActivityImport.parse(data) }
            #expect(error?.pointer == "")
            #expect(error?.message.hasPrefix("activity is not valid JSON") == true)
            return
        }
        let design = try ActivityImport.parse(data)
        let served = try JSONDecoder().decode(
            JSONValue.self, from: JSONEncoder().encode(design.served(language: "en")))
        let original = try JSONDecoder().decode(JSONValue.self, from: data)
        guard case .object(let envelope) = original, case .object(let activity)? = envelope["activity"],
            case .array(let originalSteps)? = activity["steps"],
            case .object(let servedActivity) = served, case .array(let servedSteps)? = servedActivity["steps"]
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(StepComparison.differences(originalSteps, servedSteps, path: "steps") == [])
    }

    @Test func servedStepsCarryEveryFieldTheAppsRead() throws {
        let data = Data(#"{"activity":{"metadata":{"activityId":"A","version":"1"},"steps":[{"type":"question","resultType":"boolean","key":"q1"}]}}"#.utf8)
        let design = try ActivityImport.parse(data).served(language: nil)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(design)) as! [String: Any]
        #expect(object["type"] as? String == "questionnaire")
        let step = try #require((object["steps"] as? [[String: Any]])?.first)
        for field in ["type", "resultType", "key", "title", "text", "skippable", "groupName", "repeatable",
                      "repeatableText", "destinations", "healthDataKey", "format", "steps"] {
            #expect(step[field] != nil, "\(field) missing")
        }
    }

    @Test func anUnknownResultTypeIsAClearErrorWithAPointer() throws {
        let data = Data(#"{"activity":{"metadata":{"activityId":"A"},"steps":[{"type":"question","resultType":"scale","key":"a"},{"type":"question","resultType":"slider","key":"b"}]}}"#.utf8)
        let error = #expect(throws: ActivityImport.ParseError.self) { try ActivityImport.parse(data) }
        #expect(error?.pointer == "/activity/steps/1/resultType")
        #expect(error?.message.hasPrefix("unknown question resultType \"slider\"") == true)
    }

    @Test func aWronglyTypedFormatFieldIsLocated() throws {
        let data = Data(#"{"metadata":{"activityId":"A"},"steps":[{"type":"form","resultType":"grouped","key":"f","steps":[{"type":"question","resultType":"text","key":"t","format":{"maxLength":"long"}}]}]}"#.utf8)
        let error = #expect(throws: ActivityImport.ParseError.self) { try ActivityImport.parse(data) }
        #expect(error?.pointer == "/steps/0/steps/0/format/maxLength")
        #expect(error?.message == "must be an integer")
    }

    @Test func aTaskActivityIsRecognisedFromItsSteps() throws {
        let url = try #require(Self.designs.first { $0.lastPathComponent == "DYNAMICSCHEMASTUDY_TOH-75_1.0.json" })
        let design = try ActivityImport.parse(Data(contentsOf: url))
        #expect(design.kind == .task)
        #expect(design.steps.first?.taskType == .towerOfHanoi)
        #expect(design.metadata.version == "1.0")
    }
}
