import Foundation
import JSONText
import SageAssessments
import StudyModels
import Testing
import TestSupport
import ZipArchive

/// Sage result archives assembled from Sage's own example files, as its clients write them.
@Suite struct ResultArchiveTests {
    static let examples = SageExamplesTests.fixtures.appendingPathComponent("examples/v2")
    static let metadata = examples.appendingPathComponent("ArchiveMetadata/ArchiveMetadata_0.json")
    static let result = examples.appendingPathComponent("AssessmentResultObject/AssessmentResultObject_0.json")

    /// A manifest listing `assessmentResult.json` alone.
    static let resultOnlyManifest =
        #"{"appName": "a", "appVersion": "1", "deviceInfo": "d", "deviceTypeIdentifier": "x", "files": [{"filename": "assessmentResult.json", "timestamp": "2026-11-26T10:00:00.000+01:00"}]}"#

    private func read(_ zip: ZipWriter) throws -> ResultArchive {
        try ResultArchive(try ZipArchive(zip.bytes(), limits: ResultArchive.limits), schemas: try SageSchemaSet.bundled())
    }

    private func refusal(_ zip: ZipWriter) throws -> ResultArchive.Refusal? {
        do {
            _ = try read(zip)
            return nil
        } catch let refusal as ResultArchive.Refusal {
            return refusal
        }
    }

    @Test func sagesExampleArchiveIsRefusedForTheFileItsManifestNamesAndReadWithIt() throws {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(try Data(contentsOf: Self.metadata)))
        zip.add("assessmentResult.json", Array(try Data(contentsOf: Self.result)))
        // Sage's example manifest lists only foo.json.
        let refused = try refusal(zip)
        #expect(refused?.file == "metadata.json")
        #expect(refused?.problems == [ValidationProblem(pointer: "/files/0/filename", message: "names foo.json, which the archive does not hold")])

        zip.add("foo.json", Array(#"{"foo": "baroo"}"#.utf8))
        zip.add("notes.txt", Array("extra".utf8))
        let archive = try read(zip)
        #expect(archive.assessmentIdentifier == "example")
        #expect(archive.taskRunUUID != nil)
        #expect(archive.unlisted == ["assessmentResult.json", "notes.txt"])
        #expect(archive.answers.count == 14)
        #expect(archive.answers.map(\.path).prefix(3) == ["answers/question1", "answers/question2", "answers/question3"])
        #expect(archive.answers.first { $0.path == "answers/question2" }?.value == .number(42))
        #expect(archive.answers.first { $0.path == "answers/question8" }?.answerType == "array")
        #expect(archive.answers.first { $0.path == "answers/question13" }?.value == .number(75))
    }

    @Test func anArchiveWithoutAManifestOrWithABrokenResultIsRefusedWithWhere() throws {
        var bare = ZipWriter()
        bare.add("answers.json", Array("{}".utf8))
        #expect(try refusal(bare)?.problems.map(\.message) == ["it holds no metadata.json"])

        var broken = ZipWriter()
        broken.add("metadata.json", Array(#"{"appName": "a", "appVersion": "1", "deviceInfo": "d", "deviceTypeIdentifier": "x", "files": []}"#.utf8))
        broken.add("assessmentResult.json", Array(#"{"type": "assessment", "identifier": "a", "startDate": "yesterday", "taskRunUUID": "u", "stepHistory": [{"type": "answer"}]}"#.utf8))
        let refused = try refusal(broken)
        #expect(refused?.file == "assessmentResult.json")
        #expect(refused?.problems.map(\.pointer).contains("/startDate") == true)
        #expect(refused?.problems.map(\.pointer).contains("/stepHistory/0") == true)

        var notJSON = ZipWriter()
        notJSON.add("metadata.json", Array("{".utf8))
        #expect(try refusal(notJSON)?.file == "metadata.json")
    }

    @Test func theLastAnswerAtAPathWinsAndSectionsNameTheirSteps() throws {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(Self.resultOnlyManifest.utf8))
        zip.add("assessmentResult.json", Array(#"""
            {"type": "assessment", "identifier": "mood", "startDate": "2026-11-26T10:00:00.000+01:00", "taskRunUUID": "8A3C",
             "stepHistory": [
               {"type": "answer", "identifier": "feeling", "startDate": "2026-11-26T10:00:01Z", "value": 2, "answerType": {"type": "integer"}},
               {"type": "section", "identifier": "sleep", "startDate": "2026-11-26T10:00:02Z", "stepHistory": [
                 {"type": "answer", "identifier": "hours", "startDate": "2026-11-26T10:00:03Z", "value": 7.5, "answerType": {"type": "number"}}]},
               {"type": "answer", "identifier": "feeling", "startDate": "2026-11-26T10:00:04Z", "value": 1, "answerType": {"type": "integer"}}]}
            """#.utf8))
        let archive = try read(zip)
        #expect(archive.taskRunUUID == "8A3C")
        #expect(archive.unlisted.isEmpty)
        #expect(archive.answers == [
            .init(path: "feeling", value: .number(1), answerType: "integer"),
            .init(path: "sleep/hours", value: .number(7.5), answerType: "number"),
        ])
    }

    /// Two steps whose identifiers differ only in normalisation (`\u{e9}` and `e\u{301}`) are two
    /// answers, and two files so named are two files, neither listed in the manifest.
    @Test func pathsAndFileNamesAreComparedByTheirScalars() throws {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(Self.resultOnlyManifest.utf8))
        zip.add("assessmentResult.json", Array(#"""
            {"type": "assessment", "identifier": "mood", "startDate": "2026-11-26T10:00:00.000+01:00", "taskRunUUID": "8A3D",
             "stepHistory": [
               {"type": "answer", "identifier": "caf\u00e9", "startDate": "2026-11-26T10:00:01Z", "value": 1, "answerType": {"type": "integer"}},
               {"type": "answer", "identifier": "cafe\u0301", "startDate": "2026-11-26T10:00:02Z", "value": 2, "answerType": {"type": "integer"}}]}
            """#.utf8))
        zip.add("caf\u{e9}.json", Array("1".utf8))
        zip.add("cafe\u{301}.json", Array("2".utf8))
        let archive = try read(zip)
        #expect(archive.unlisted.map { Array($0.unicodeScalars) } == [Array("caf\u{e9}.json".unicodeScalars), Array("cafe\u{301}.json".unicodeScalars)])
        try #require(archive.answers.count == 2)
        #expect(archive.answers.map { Array($0.path.unicodeScalars) } == [Array("caf\u{e9}".unicodeScalars), Array("cafe\u{301}".unicodeScalars)])
        #expect(archive.answers.map(\.value) == [.number(1), .number(2)])
    }

    /// A check-in with every kind of answer and a motion recording, as each of Sage's clients
    /// builds it (`SageClientRun`; docs/sage.md, What Sage's clients do): `answers.json` listed
    /// with the relative `answers_schema.json`, which Sage's schema (`format: uri`) refused, so
    /// that no archive of theirs was accepted; every answer read at its path with the type its
    /// result gives it, the recording kept as a listed file.
    @Test func aCheckInWithEveryKindOfAnswerIsReadAsEachClientBuildsIt() throws {
        let platforms = SageClientRun.Platform.allCases
        #expect(platforms.count == 2)
        for platform in platforms {
            let zip = try ZipArchive(SageClientRun.archive(platform, runId: "R-\(platform)"), limits: ResultArchive.limits)
            let archive = try ResultArchive(zip, schemas: try SageSchemaSet.bundled())
            #expect(archive.assessmentIdentifier == "checkin", "\(platform)")
            #expect(archive.taskRunUUID == "R-\(platform)")
            #expect(archive.unlisted.isEmpty, "\(platform): \(archive.unlisted)")
            #expect(archive.files.map(\.name).contains("motion.json"))
            #expect(archive.answers.map(\.path) == [
                "hours", "weight", "born", "pain", "bedtime", "nap", "notes", "mood/feeling", "mood/factors", "mood/cause", "rested",
            ], "\(platform)")
            let types = archive.answers.map { $0.answerType ?? "" }
            #expect(types == ["integer", "number", "integer", "integer", "time", "duration", "string", "integer", "array", "string", "boolean"])
            #expect(archive.answers.first { $0.path == "mood/factors" }?.value == .array(["noise", "light", "a dog barking, twice"].map(JSONValue.string)))
        }
    }
}
