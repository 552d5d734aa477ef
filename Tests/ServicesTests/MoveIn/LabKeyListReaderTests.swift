import Foundation
import JSONText
import MoveIn
import StudyModels
import Testing
import TestSupport
import ZipArchive

/// A LabKey-era response server's exported lists read back (`LabKeyListReader`) and rebuilt into
/// the responses the apps sent (`LabKeyResponseRebuild`). The oracle is each conformance response
/// the lists were written from (Tests/Fixtures/PROVENANCE.md), not our own engine.
struct LabKeyListReaderTests {
    static let folder = Conformance.labkey.appendingPathComponent("lists-export")
    static let designs = Conformance.labkey.appendingPathComponent("SurveyMetadata")

    static func json(_ url: URL) throws -> JSONValue {
        try JSONValue.parse(Array(try Data(contentsOf: url)), budget: .init(maxBytes: 1 << 22, maxNodes: 100_000))
    }

    /// The study as `studies read` keeps it: each activity's reply at its version.
    static func study() throws -> MyStudiesStudyExport.Study {
        let activities = try [("NewSurvey", "3"), ("OtherOption", "1"), ("FKC-74", "1.0"), ("TOH-75", "1.0"), ("SSM-76", "1.0")].map { id, version in
            MyStudiesStudyExport.ActivityReply(
                activityId: id, version: version, reply: try json(designs.appendingPathComponent("DYNAMICSCHEMASTUDY_\(id)_\(version).json")))
        }
        return MyStudiesStudyExport.Study(listing: .object(JSONObject(pairs: [("studyId", .string("DYNAMICSCHEMASTUDY"))])), activities: activities)
    }

    static func export() throws -> LabKeyListExport {
        try LabKeyListReader.read(
            lists: folder.appendingPathComponent("DYNAMICSCHEMASTUDY.lists.zip"), participants: folder.appendingPathComponent("Participant.tsv"),
            responseMetadata: folder.appendingPathComponent("ResponseMetadata.tsv"))
    }

    @Test func everyConformanceResponseComesBackFromItsListsAsTheAppSentIt() throws {
        let outcome = LabKeyResponseRebuild(study: try Self.study(), zone: TimeZone(identifier: "UTC")!).rebuild(try Self.export())
        #expect(outcome.rowsRead == 6)
        try #require(outcome.responses.count == 5, "\(outcome.findings)")
        let expected: [(list: String, key: String, file: String, token: String, created: String)] = [
            ("NewSurvey", "1", "NewSurvey_3", "5f0a9c3e8b7d4e21a6c9f0b1d2e3a4b5", "1494493965123"),
            ("OtherOption", "1", "OtherOption_1", "c4e8a1f2b3d5968a7e0c1b2d3f4a5e6c", "1494583200000"),
            ("FKC-74", "1", "FKC-74_1.0", "5f0a9c3e8b7d4e21a6c9f0b1d2e3a4b5", "1494664200500"),
            ("TOH-75", "1", "TOH-75_1.0", "c4e8a1f2b3d5968a7e0c1b2d3f4a5e6c", "1494787510000"),
            ("SSM-76", "1", "SSM-76_1.0", "5f0a9c3e8b7d4e21a6c9f0b1d2e3a4b5", "1494831900000"),
        ]
        for (response, want) in zip(outcome.responses, expected) {
            #expect(response.document == "labkey:lists/\(want.list)/\(want.key)")
            #expect(response.studyId == "DYNAMICSCHEMASTUDY")
            #expect(response.fields["participantId"]?.string == want.token)
            #expect(response.fields["activityId"]?.string == want.list)
            #expect(response.fields["createdTimestamp"]?.string == want.created)
            let original = try Self.json(Self.designs.appendingPathComponent("DYNAMICSCHEMASTUDY_\(want.file)--RESPONSE.json"))
            // The original kept an "other" option's text only where the design asks for one
            // (`textfieldReq`): elsewhere it was lost at the source.
            let design = try Self.json(Self.designs.appendingPathComponent("DYNAMICSCHEMASTUDY_\(want.file).json"))
            let textless = Set((design["activity"]?["steps"]?.array ?? []).compactMap { step -> String? in
                let options = step["format"]?["textChoices"]?.array ?? []
                return options.contains { $0["other"]?["textfieldReq"] == .bool(true) } ? nil : step["key"]?.string
            })
            try Self.expectSameResults(response.fields["results"]?.array ?? [], original["results"]?.array ?? [], at: want.list, textless: textless)
            // What the import sends on is the app's request again.
            guard case .success(let app) = MyStudiesAppResponse.rebuild(response) else {
                Issue.record("\(want.list) could not be taken as an app's response")
                continue
            }
            #expect(app.receivedAt == Date(timeIntervalSince1970: (Double(want.created) ?? 0) / 1000))
        }
        // The participant who withdrew keeps no app token there; the list that is no activity's is named.
        #expect(outcome.findings.contains { $0.at == "lists/OtherOption/2" && $0.effect == .notImported && $0.message.contains("no app token") })
        #expect(outcome.findings.contains { $0.at == "ParticipantNotes" && $0.message.contains("no activity's") })
        #expect(outcome.findings.count == 2, "\(outcome.findings)")
    }

    /// Each answer the app sent is there with its type, skip, value and times; a form's answers and
    /// a task's results in turn.
    static func expectSameResults(_ rebuilt: [JSONValue], _ original: [JSONValue], at place: String, textless: Set<String> = []) throws {
        let answered = original.filter { !($0["resultType"]?.string ?? "").isEmpty }
        for sent in answered {
            let key = sent["key"]?.string ?? ""
            let rebuiltResult = rebuilt.first { $0["key"]?.string == key }
            guard let result = rebuiltResult else {
                Issue.record("\(place): \(key) is missing")
                continue
            }
            let type = (sent["resultType"]?.string ?? "").lowercased()
            #expect(result["resultType"]?.string?.lowercased() == type, "\(place).\(key)")
            #expect(result["skipped"] == sent["skipped"], "\(place).\(key)")
            if !["grouped", "fetalkickcounter", "spatialspanmemory", "towerofhanoi"].contains(type) {
                #expect(instant(result["startTime"]) == instant(sent["startTime"]), "\(place).\(key) start")
                #expect(instant(result["endTime"]) == instant(sent["endTime"]), "\(place).\(key) end")
            }
            switch type {
            case "grouped", "fetalkickcounter", "spatialspanmemory", "towerofhanoi":
                let sentValue = sent["value"]?.array ?? []
                // One repetition may be sent as its results, several as a list of them.
                var sentRounds: [[JSONValue]] = sentValue.map { $0.array ?? [] }
                if case .object? = sentValue.first { sentRounds = [sentValue] }
                let rebuiltValue = result["value"]?.array ?? []
                let rebuiltRounds: [[JSONValue]] = type == "grouped" || rebuiltValue.first?.array != nil ? rebuiltValue.map { $0.array ?? [] } : [rebuiltValue]
                try #require(rebuiltRounds.count == sentRounds.count, "\(place).\(key): \(rebuiltRounds.count) rounds")
                for (index, (rebuiltRound, sentRound)) in zip(rebuiltRounds, sentRounds).enumerated() {
                    try expectSameResults(rebuiltRound, sentRound, at: "\(place).\(key)[\(index)]")
                }
            default:
                #expect(plain(result["value"], type: type) == plain(sent["value"], type: type, textless: textless.contains(key)), "\(place).\(key)")
            }
        }
        // Nothing answered that the app did not send.
        let sentKeys = Set(answered.compactMap { $0["key"]?.string })
        for result in rebuilt where !sentKeys.contains(result["key"]?.string ?? "") {
            #expect(result["value"] == .null, "\(place): \(result["key"]?.string ?? "") has a value the app did not send")
        }
    }

    /// A value as comparable text: numbers by value, date-times by instant, a choice "other" with
    /// no text as its choice (the server kept no empty text).
    static func plain(_ value: JSONValue?, type: String, textless: Bool = false) -> String {
        switch value {
        case .number(let number)?: return String(number.double)
        case .string(let text)?:
            if type == "date", text.count > 10 { return instant(value).map { String($0.timeIntervalSince1970) } ?? text }
            return text
        case .array(let items)?: return "[" + items.map { plain($0, type: type, textless: textless) }.joined(separator: ",") + "]"
        case .object(let members)?:
            let text = members["text"]?.string ?? ""
            return textless || text.trimmingCharacters(in: .whitespaces).isEmpty ? (members["other"]?.string ?? "") : "\(members["other"]?.string ?? "")|\(text)"
        case .bool(let flag)?: return String(flag)
        default: return "null"
        }
    }

    static func instant(_ value: JSONValue?) -> Date? {
        guard let text = value?.string else { return nil }
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    @Test func theVersionIsTheOneCurrentWhenTheResponseWasStored() throws {
        func reply(_ version: String, lastModified: String, key: String) throws -> MyStudiesStudyExport.ActivityReply {
            let text = """
                {"message": "SUCCESS", "activity": {"type": "questionnaire", "metadata": {"activityId": "Daily", "version": "\(version)",
                 "lastModified": "\(lastModified)"}, "steps": [{"type": "question", "resultType": "scale", "key": "\(key)"}]}}
                """
            return MyStudiesStudyExport.ActivityReply(
                activityId: "Daily", version: version, reply: try JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 4096, maxNodes: 100)))
        }
        let study = MyStudiesStudyExport.Study(
            listing: .object(JSONObject(pairs: [("studyId", .string("S1"))])),
            activities: [try reply("2", lastModified: "2017-06-01T00:00:00.000-0400", key: "mood"), try reply("1", lastModified: "2017-01-01T00:00:00.000-0400", key: "mood")])
        let lists = [LabKeyListExport.Table(name: "Daily", columns: ["Key", "mood", "retired", "ParticipantId"], rows: [["1", "3.0", "x", "7"], ["2", "4.0", "", "7"]])]
        let participants = LabKeyListExport.Table(name: "Participant", columns: ["RowId", "AppToken"], rows: [["7", "token-7"]])
        let metadata = LabKeyListExport.Table(
            name: "ResponseMetadata", columns: ["ListName", "ActivityId", "FieldName", "StartTime", "EndTime", "Skipped", "Created"],
            rows: [
                ["Daily", "1", "mood", "2017-03-01 09:00", "2017-03-01 09:01", "false", "2017-03-01 09:02"],
                ["daily", "2", "MOOD", "2017-07-01 09:00:00.0", "2017-07-01 09:01:00.0", "true", "2017-07-01 09:02:00.0"],
            ])
        let outcome = LabKeyResponseRebuild(study: study, zone: TimeZone(identifier: "America/New_York")!)
            .rebuild(LabKeyListExport(lists: lists, participants: participants, responseMetadata: metadata))
        try #require(outcome.responses.count == 2)
        #expect(outcome.responses.map { $0.fields["version"]?.string } == ["1", "2"])
        let first = outcome.responses[0].fields["results"]?.array?.first
        #expect(first?["value"] == .number(JSONNumber(3)))
        #expect(first?["startTime"]?.string == "2017-03-01T09:00:00.000-0500")
        // Skipped: no value, whatever the column holds.
        #expect(outcome.responses[1].fields["results"]?.array?.first?["skipped"] == .bool(true))
        #expect(outcome.responses[1].fields["results"]?.array?.first?["value"] == .null)
        // A column no step of the design reads is said, not dropped silently.
        #expect(outcome.findings.map(\.at) == ["lists/Daily#retired (version 1)"])
    }

    @Test func realLabKeyArchivesAreReadAsLabKeyWroteThem() throws {
        let people = try LabKeyListReader.lists(Array(try Data(contentsOf: Conformance.labkey.appendingPathComponent("lists/ListOfPeople.lists.zip"))))
        try #require(people.map(\.name) == ["People"])
        #expect(people[0].columns == ["Key", "First", "Last", "Age", "Appearance", "Sex", "Height", "File", "Notes"])
        try #require(people[0].rows.count == 5)
        #expect(people[0].rows[0] == ["1", "Fred", "Flintstone", "37", "1960-09-30 00:00:00.0", "1", "1.8", "", ""])
        #expect(people[0].rows[4] == ["5", "Dino", "Flintstone", "5", "1960-09-30 00:00:00.0", "1", "1.0", "", ""])
        // Java's ZipOutputStream (sizes after the data), twelve lists with headers alone.
        let tests = try LabKeyListReader.lists(Array(try Data(contentsOf: Conformance.labkey.appendingPathComponent("lists/TestLists.lists.zip"))))
        #expect(tests.count == 12)
        #expect(tests.first { $0.name == "InitialSurveyRx" }?.columns == ["Key", "SurveyId", "MedVsRxUse", "ParticipantId"])
        #expect(tests.allSatisfy { $0.rows.isEmpty })
        // LabKey's quoting: kept spaces and doubled quotes.
        let ours = try Self.export().lists.first { $0.name == "ParticipantNotes" }
        #expect(ours?.rows.map { $0[1] } == ["  leading spaces kept", "a \"quoted\" word"])
    }

    @Test func brokenExportsAreRefusedWithWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("labkey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = Self.folder
        func refusal(lists: URL = good.appendingPathComponent("DYNAMICSCHEMASTUDY.lists.zip"), participants: URL = good.appendingPathComponent("Participant.tsv"),
                     metadata: URL = good.appendingPathComponent("ResponseMetadata.tsv")) -> String {
            do {
                _ = try LabKeyListReader.read(lists: lists, participants: participants, responseMetadata: metadata)
                return "read"
            } catch { return "\(error)" }
        }
        let notZip = folder.appendingPathComponent("a.lists.zip")
        try Data("Key\tName\n".utf8).write(to: notZip)
        #expect(refusal(lists: notZip).hasPrefix("the list archive cannot be read: it is not a ZIP archive"))
        let noToken = folder.appendingPathComponent("Participant.tsv")
        try Data("Row Id\tStatus\n1\tEnrolled\n".utf8).write(to: noToken)
        #expect(refusal(participants: noToken) == "Participant.tsv has no AppToken column: export it with RowId, AppToken")
        let wide = folder.appendingPathComponent("ResponseMetadata.tsv")
        try Data("ListName\tActivityId\tFieldName\tStartTime\tEndTime\tSkipped\tCreated\nA\t1\tx\t\t\tfalse\t\textra\n".utf8).write(to: wide)
        #expect(refusal(metadata: wide) == "ResponseMetadata, line 2: 8 fields under 7 columns")
    }
}
